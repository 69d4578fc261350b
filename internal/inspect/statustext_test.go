package inspect_test

import (
	"bytes"
	"testing"

	"github.com/tickscope/tickscope/internal/inspect"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/timerstate"
	"github.com/tickscope/tickscope/internal/waitcheck"
)

func TestStatusStartupLines(t *testing.T) {
	tests := []struct {
		name  string
		state inspect.StartupState
		want  []string
	}{
		{"windowless holder holding", inspect.StartupState{Mechanism: "task", Installed: true, Ours: true, Exe: `C:\t\tickscope-holder.exe`, Holds: "--resolution 5000", Running: true, PID: 4, InForce: true, Log: "holding until the process is ended"},
			[]string{"  state          running (process 4), the timer is at what it holds or finer\n", "  last logged    holding until the process is ended\n"}},
		{"running, not holding", inspect.StartupState{Mechanism: "task", Installed: true, Ours: true, Running: true, PID: 4},
			[]string{"  state          running (process 4), the timer is not at what it holds\n"}},
		{"waiting for its programs", inspect.StartupState{Mechanism: "task", Installed: true, Ours: true, Running: true, PID: 4, While: []string{"game.exe", "other.exe"}},
			[]string{"  while          game.exe, other.exe\n", "  state          running (process 4), none of game.exe, other.exe runs\n"}},
		{"waiting on process events", inspect.StartupState{Mechanism: "unit", Installed: true, Ours: true, Running: true, PID: 4, While: []string{"game"}, WhileSource: timerstate.SourceEvents},
			[]string{"  while          game\n  looks          at each process start and exit the kernel announces, and every 10s\n"}},
		{"waiting on the scan", inspect.StartupState{Mechanism: "unit", Installed: true, Ours: true, Running: true, PID: 4, While: []string{"game"}, WhileSource: timerstate.SourceScan},
			[]string{"  while          game\n  looks          every 1s\n"}},
		{"holding for a program", inspect.StartupState{Mechanism: "task", Installed: true, Ours: true, Running: true, PID: 4, InForce: true, While: []string{"game.exe"},
			HoldingFor: []timerstate.ProgramRunning{{Program: "game.exe", PID: 4242}}},
			[]string{"  state          running (process 4), game.exe (pid 4242) runs, the timer is at what it holds or finer\n"}},
		{"stopped, its error logged", inspect.StartupState{Mechanism: "task", Installed: true, Ours: true, Stale: true, Log: "tickscope: error: another startup holder runs"},
			[]string{"stale: it runs another executable than this tickscope's holder", "  state          not running\n", "  last logged    tickscope: error: another startup holder runs\n"}},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		inspect.WriteStatus(&b, &inspect.StatusReport{Self: inspect.SelfCheck{Without: &waitcheck.Check{Method: "sleep"}}, Query: &timerinfo.Report{OS: "windows", Windows: &timerinfo.Windows{}}, Startup: &tt.state})
		for _, want := range tt.want {
			if !bytes.Contains(b.Bytes(), []byte(want)) {
				t.Errorf("%s: status lacks %q:\n%s", tt.name, want, b.String())
			}
		}
	}
}
