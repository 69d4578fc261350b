package inspect_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/inspect"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/startup"
	"github.com/tickscope/tickscope/internal/timerstate"
)

// The windowless holder (issue 16): the logon task runs the GUI-subsystem
// build beside tickscope.exe, status calls a task stale when it runs
// anything else, and the holder's output goes to its log. A double-clicked
// tickscope opens tickscope ui (cmd/tickscope/testdata/wine/double_click.txtar).

func TestStatusStaleComparesWithTheHolder(t *testing.T) {
	tests := []struct {
		name      string
		taskExe   string
		wantStale bool
	}{
		{"this tickscope's holder", windowsHolder, false},
		{"the holder in other case", `c:\TOOLS\Tickscope-Holder.exe`, false},
		{"tickscope.exe itself: a console opens at logon", windowsExe, true},
		{"another copy's holder", `D:\old\tickscope-holder.exe`, true},
	}
	for _, tt := range tests {
		sys := &sim.System{Exe: windowsExe, Temp: t.TempDir()}
		sys.NewStartup("task").Definition = taskOf(t, tt.taskExe, true)
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
			h := newWindows(t, "knee-26100")
			h.current = tt.current
			sys := &sim.System{Exe: windowsExe, Temp: t.TempDir(), HolderRunning: tt.running, HolderPID: 8}
			sys.NewStartup("task").Definition = taskOf(t, windowsHolder, true)
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

func TestHolderLog(t *testing.T) {
	holderArgs := []string{"apply", "--resolution", "10000", "--no-console", "--no-esc", "--as-startup"}
	tests := []struct {
		name    string
		console seam.Console
		args    []string
		wantLog bool
	}{
		{"the windowless holder", seam.ConsoleNone, holderArgs, true},
		{"the holder in a terminal", seam.ConsoleShared, holderArgs, false},
		{"the holder on a console of its own", seam.ConsoleAlone, holderArgs, false},
		{"another windowless run must not empty the holder's log", seam.ConsoleNone, []string{"status"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys := &sim.System{Temp: t.TempDir(), State: t.TempDir(), ConsoleState: tt.console}
			var stdout, stderr io.Writer = os.Stdout, os.Stderr
			closeLog := startup.LogHolderOutput(sys, tt.args, &stdout, &stderr)
			io.WriteString(stdout, "holding\n")
			io.WriteString(stderr, "tickscope: error: NtSetTimerResolution failed\n")
			closeLog()
			if entries, _ := os.ReadDir(sys.Temp); len(entries) != 0 {
				t.Errorf("%d files in the temporary directory, want none", len(entries))
			}
			data, err := os.ReadFile(holderLog(t, sys))
			if !tt.wantLog {
				if err == nil || stdout != os.Stdout || stderr != os.Stderr {
					t.Errorf("a log was made (%q), or the output was moved", data)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			if len(lines) != 3 || !strings.HasPrefix(lines[0], "tickscope ") || !strings.HasSuffix(lines[0], strings.Join(holderArgs, " ")) || lines[1] != "holding" {
				t.Errorf("the log:\n%s", data)
			}
			sys.NewStartup("task")
			if got := inspect.ReadStartup(sys, true).Log; got != "tickscope: error: NtSetTimerResolution failed" {
				t.Errorf("status shows the log's last line as %q", got)
			}
			if got := inspect.ReadStartup(sys, false).Log; got != "" {
				t.Errorf("status elsewhere than Windows shows %q, want no log", got)
			}
		})
	}
	for _, state := range []string{filepath.Join(t.TempDir(), "none"), ""} {
		if got := inspect.ReadStartup(&sim.System{State: state, StartupMechanism: &sim.Startup{}}, true); got.Log != "" {
			t.Errorf("no log in %q: status shows %q", state, got.Log)
		}
	}
}

// holderLog is the holder's log in sys's state directory.
func holderLog(t *testing.T, sys seam.System) string {
	t.Helper()
	dir, err := sys.StateDir()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, timerstate.HolderLogName)
}
