package inspect_test

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/tickscope/tickscope/internal/sim/simtest"

	"github.com/tickscope/tickscope/internal/inspect"
	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/timerstate"
)

// linuxHost is a seam.Host whose query is a Linux machine's; it measures
// nothing.
type linuxHost struct {
	seam.Host
	dma int32
}

func (h *linuxHost) Query() (*timerinfo.Report, error) { return simtest.LinuxReport(h.dma), nil }

func isUsage(err error) bool {
	var usage *options.UsageError
	return errors.As(err, &usage)
}

// bootMachine is an elevated Windows machine whose requests are global,
// with the logon task and the boot service mechanisms and nothing
// installed, running simtest.BootExe.
func bootMachine(t *testing.T) (*simtest.WindowsHost, *sim.System, *sim.Service) {
	h, sys, _ := simtest.PersistMachine(t)
	sys.Exe, sys.IsElevated = simtest.BootExe, true
	return h, sys, sys.NewBootService("Windows service tickscope")
}

// serviceOf is a service definition for exe, tickscope's (with its marker)
// or not.
func serviceOf(exe string, ours bool) []byte {
	description := "someone else's service"
	if ours {
		description = "Holds 1 ms from boot. " + persist.Marker("0.1.0")
	}
	return []byte(persist.ServiceText(persist.BootService(exe, []string{"apply", "--resolution", "10000", "--no-esc", "--as-service"}, description)))
}

// processes is the fake OS's process list, which the test changes.
type processes struct {
	mu   sync.Mutex
	list []sim.RunningProcess
}

func (p *processes) running() []sim.RunningProcess {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]sim.RunningProcess(nil), p.list...)
}

func (p *processes) set(list ...sim.RunningProcess) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.list = list
}

func game(pid int, name string) sim.RunningProcess {
	return sim.RunningProcess{PID: pid, Name: name, Path: `C:\Games\` + name}
}

func TestStatusSeesStaleAndForeignDefinitions(t *testing.T) {
	tests := []struct {
		name       string
		definition []byte
		running    bool
		pid        int
		want       inspect.StartupState
	}{
		{"nothing", nil, false, 0, inspect.StartupState{}},
		{"ours, this exe's holder", simtest.TaskOf(t, simtest.WindowsHolder, true), true, 9, inspect.StartupState{Installed: true, Ours: true, Exe: simtest.WindowsHolder, Holds: "--ms 1", Running: true, PID: 9}},
		{"ours, the same holder in other case", simtest.TaskOf(t, `c:\tools\TICKSCOPE-HOLDER.EXE`, true), false, 0, inspect.StartupState{Installed: true, Ours: true, Exe: `c:\tools\TICKSCOPE-HOLDER.EXE`, Holds: "--ms 1"}},
		{"ours, this exe itself (a console holder)", simtest.TaskOf(t, simtest.WindowsExe, true), false, 0, inspect.StartupState{Installed: true, Ours: true, Exe: simtest.WindowsExe, Holds: "--ms 1", Stale: true}},
		{"ours, another exe", simtest.TaskOf(t, `D:\old\tickscope.exe`, true), false, 0, inspect.StartupState{Installed: true, Ours: true, Exe: `D:\old\tickscope.exe`, Holds: "--ms 1", Stale: true}},
		{"foreign", simtest.TaskOf(t, `D:\x.exe`, false), false, 0, inspect.StartupState{Installed: true, Exe: `D:\x.exe`, Holds: "--ms 1", Stale: true}},
		{"running, pid unreadable", nil, true, 0, inspect.StartupState{Running: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys := &sim.System{Exe: simtest.WindowsExe, HolderRunning: tt.running, HolderPID: tt.pid}
			sys.NewStartup("task").Definition = tt.definition
			got := inspect.ReadStartup(sys, true)
			got.Args = nil
			tt.want.Mechanism = "task"
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("ReadStartup = %+v\nwant %+v", *got, tt.want)
			}
		})
	}
	if got := inspect.ReadStartup(&sim.System{}, false); got != nil {
		t.Errorf("no startup mechanism: %+v, want nil", got)
	}
}

func TestSamePathFollowsTheOS(t *testing.T) {
	tests := []struct {
		a, b    string
		windows bool
		want    bool
	}{
		{`C:\Tools\tickscope.exe`, `c:\tools\TICKSCOPE.exe`, true, true},
		{`C:\Tools\tickscope.exe`, `C:\Tools\other.exe`, true, false},
		{"/no/such/dir/tickscope", "/no/such/dir/../dir/tickscope", false, true},
		{"/no/such/dir/tickscope", "/no/such/dir/TICKSCOPE", false, false},
	}
	for _, tt := range tests {
		if got := inspect.SamePath(tt.a, tt.b, tt.windows); got != tt.want {
			t.Errorf("SamePath(%q, %q, windows %v) = %v, want %v", tt.a, tt.b, tt.windows, got, tt.want)
		}
	}
}

// startup remove stops the boot service (which releases its setting) and
// deletes it, elevated. A service of that name tickscope did not create,
// or tickscope's without elevation, is left as it was and said why
// (NotDone, exit 1), and the user's own logon task is removed all the same.
// status reads the boot service: installed, whose, what it runs and as
// whom, its state, how it last stopped, and stale when it runs another
// tickscope.exe than this one.
func TestStatusReadsTheBootService(t *testing.T) {
	tests := []struct {
		name       string
		definition []byte
		state      seam.ServiceState
		want       inspect.StartupState
	}{
		{"nothing", nil, seam.ServiceState{}, inspect.StartupState{}},
		{"running", serviceOf(simtest.BootExe, true), seam.ServiceState{State: "running", PID: 31},
			inspect.StartupState{Installed: true, Ours: true, Exe: simtest.BootExe, Holds: "--resolution 10000", Running: true, PID: 31, State: "running", Account: `NT AUTHORITY\LocalService`}},
		{"stopped with an error", serviceOf(simtest.BootExe, true), seam.ServiceState{State: "stopped", ExitCode: 1, ServiceSpecific: true},
			inspect.StartupState{Installed: true, Ours: true, Exe: simtest.BootExe, Holds: "--resolution 10000", State: "stopped", Exit: "service-specific exit code 1", Account: `NT AUTHORITY\LocalService`}},
		{"another tickscope.exe", serviceOf(`C:\Program Files\old\tickscope.exe`, true), seam.ServiceState{State: "stopped"},
			inspect.StartupState{Installed: true, Ours: true, Exe: `C:\Program Files\old\tickscope.exe`, Holds: "--resolution 10000", State: "stopped", Stale: true, Account: `NT AUTHORITY\LocalService`}},
		{"foreign", serviceOf(`C:\tools\x.exe`, false), seam.ServiceState{State: "running", PID: 8},
			inspect.StartupState{Installed: true, Exe: `C:\tools\x.exe`, Holds: "--resolution 10000", Running: true, PID: 8, State: "running", Stale: true, Account: `NT AUTHORITY\LocalService`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, sys, sv := bootMachine(t)
			sv.Definition, sv.Now = tt.definition, tt.state
			got := inspect.ReadBootService(sys)
			got.Args = nil
			tt.want.Mechanism = "Windows service tickscope"
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("ReadBootService = %+v\nwant %+v", *got, tt.want)
			}
		})
	}
	if got := inspect.ReadBootService(&sim.System{}); got != nil {
		t.Errorf("no boot service: %+v, want nil", got)
	}
}

// status: a holder with --while waits for its programs, or holds for
// those running.
func TestStatusShowsWhatAHolderWaitsFor(t *testing.T) {
	task, err := persist.TaskXML(persist.Task{Exe: simtest.WindowsHolder, Args: []string{"apply", "--ms", "1", "--while", "game.exe,other.exe"}, Description: "Holds 1 ms. " + persist.Marker("0.1.0"), DelaySeconds: 15})
	if err != nil {
		t.Fatal(err)
	}
	procs := &processes{}
	sys := &sim.System{Exe: simtest.WindowsExe, HolderRunning: true, HolderPID: 9, Running: procs.running}
	sys.NewStartup("task").Definition = task
	got := inspect.ReadStartup(sys, true)
	if fmt.Sprint(got.While) != "[game.exe other.exe]" || len(got.HoldingFor) != 0 {
		t.Errorf("waiting: %+v", got)
	}
	procs.set(game(4242, "game.exe"), game(1, "launcher.exe"))
	got = inspect.ReadStartup(sys, true)
	if len(got.HoldingFor) != 1 || got.HoldingFor[0] != (timerstate.ProgramRunning{Program: "game.exe", PID: 4242}) {
		t.Errorf("holding: %+v", got)
	}
	if got.WhileSource != timerstate.SourceScan {
		t.Errorf("where the OS has no process events, the source is %q", got.WhileSource)
	}
	sys.Listening = map[int]bool{9: true}
	if got = inspect.ReadStartup(sys, true); got.WhileSource != timerstate.SourceEvents {
		t.Errorf("the holder listens to process events, the source is %q", got.WhileSource)
	}
	sys.Listening = map[int]bool{}
	if got = inspect.ReadStartup(sys, true); got.WhileSource != timerstate.SourceScan {
		t.Errorf("the holder does not listen, the source is %q", got.WhileSource)
	}
	if held, while := timerstate.StartupDefinition(sys); held.Resolution100ns != 10000 || len(while) != 2 {
		t.Errorf("StartupDefinition = %v, %v", held, while)
	}
}
