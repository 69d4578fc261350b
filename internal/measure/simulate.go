package measure

import (
	"github.com/tickscope/tickscope/internal/sim"
)

// SimulatedSystem is the System a command runs on with --simulate: an
// in-memory Windows machine (sim.System) that is not elevated and has Task
// Scheduler, so that nothing done on the model reaches this machine. Its
// processes are the paced model's scenario's (none when model is nil).
func SimulatedSystem(model *sim.Paced) *sim.System {
	sys := &sim.System{Exe: `C:\Tools\tickscope.exe`, Temp: `C:\Users\you\AppData\Local\Temp`}
	sys.NewStartup("Task Scheduler task tickscope (simulated)")
	if model != nil {
		sys.Running = func() []sim.RunningProcess {
			var out []sim.RunningProcess
			for _, p := range model.RunningPrograms() {
				out = append(out, sim.RunningProcess{PID: p.PID, Name: p.Name, Path: p.Path, Started: p.Started})
			}
			return out
		}
	}
	return sys
}
