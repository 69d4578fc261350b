package startup_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/startup"
	"github.com/tickscope/tickscope/internal/timerstate"
)

// TestHolderLog: the windowless holder's output goes to its log, which
// status shows the last line of (timerstate.LastLogLine); a holder with a
// console, and any other command run windowless, leave it alone.
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
			if got := timerstate.LastLogLine(sys); got != "tickscope: error: NtSetTimerResolution failed" {
				t.Errorf("status shows the log's last line as %q", got)
			}
		})
	}
	for _, state := range []string{filepath.Join(t.TempDir(), "none"), ""} {
		if got := timerstate.LastLogLine(&sim.System{State: state}); got != "" {
			t.Errorf("no log in %q: status shows %q", state, got)
		}
	}
}
