package inspect_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tickscope/tickscope/internal/sim/simtest"

	"github.com/tickscope/tickscope/internal/inspect"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/timerstate"
)

// The windowless holder: the logon task runs the GUI-subsystem
// build beside tickscope.exe, status calls a task stale when it runs
// anything else, and the holder's output goes to its log. A double-clicked
// tickscope opens tickscope ui (cmd/tickscope/testdata/wine/double_click.txtar).

func TestStatusStaleComparesWithTheHolder(t *testing.T) {
	tests := []struct {
		name      string
		taskExe   string
		wantStale bool
	}{
		{"this tickscope's holder", simtest.WindowsHolder, false},
		{"the holder in other case", `c:\TOOLS\Tickscope-Holder.exe`, false},
		{"tickscope.exe itself: a console opens at logon", simtest.WindowsExe, true},
		{"another copy's holder", `D:\old\tickscope-holder.exe`, true},
	}
	for _, tt := range tests {
		sys := &sim.System{Exe: simtest.WindowsExe, Temp: t.TempDir()}
		sys.NewStartup("task").Definition = simtest.TaskOf(t, tt.taskExe, true)
		if got := inspect.ReadStartup(sys, true); got.Stale != tt.wantStale {
			t.Errorf("%s: stale %v, want %v", tt.name, got.Stale, tt.wantStale)
		}
	}
}

func TestStatusSaysWhetherTheHolderHolds(t *testing.T) {
	tests := []struct {
		name        string
		running     bool
		current     uint32
		wantInForce bool
	}{
		{"running, its period in force", true, 9996, true},
		{"running, a finer period in force", true, 5000, true},
		{"running, the timer coarser than it holds", true, 156250, false},
		{"not running", false, 5000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := simtest.NewWindows(t, "knee-26100")
			h.Current = tt.current
			sys := &sim.System{Exe: simtest.WindowsExe, Temp: t.TempDir(), HolderRunning: tt.running, HolderPID: 8}
			sys.NewStartup("task").Definition = simtest.TaskOf(t, simtest.WindowsHolder, true)
			rep, err := inspect.Status(context.Background(), h, sys)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Startup.InForce != tt.wantInForce || rep.Startup.Stale {
				t.Errorf("in force %v, stale %v; want %v, false", rep.Startup.InForce, rep.Startup.Stale, tt.wantInForce)
			}
		})
	}
}

// TestStatusShowsTheHolderLogOnWindows: status shows the last line of the
// windowless holder's log, which only Windows has, and nothing when there
// is none.
func TestStatusShowsTheHolderLogOnWindows(t *testing.T) {
	sys := &sim.System{Temp: t.TempDir(), State: t.TempDir()}
	sys.NewStartup("task")
	log := "tickscope 0.1.0: apply --resolution 10000 --as-startup\nholding\ntickscope: error: NtSetTimerResolution failed\n"
	if err := os.WriteFile(filepath.Join(sys.State, timerstate.HolderLogName), []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := inspect.ReadStartup(sys, true).Log; got != "tickscope: error: NtSetTimerResolution failed" {
		t.Errorf("status shows the log's last line as %q", got)
	}
	if got := inspect.ReadStartup(sys, false).Log; got != "" {
		t.Errorf("status elsewhere than Windows shows %q, want no log", got)
	}
	for _, state := range []string{filepath.Join(t.TempDir(), "none"), ""} {
		if got := inspect.ReadStartup(&sim.System{State: state, StartupMechanism: &sim.Startup{}}, true); got.Log != "" {
			t.Errorf("no log in %q: status shows %q", state, got.Log)
		}
	}
}
