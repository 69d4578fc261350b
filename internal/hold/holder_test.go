package hold_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/hold"
	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/startup"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/timerstate"
)

// The windowless holder (issue 16): the logon task runs the GUI-subsystem
// build beside tickscope.exe, status calls a task stale when it runs
// anything else, and the holder's output goes to its log. A double-clicked
// tickscope opens tickscope ui (cmd/tickscope/testdata/wine/double_click.txtar).

func TestPersistRunsTheWindowlessHolder(t *testing.T) {
	req := timerinfo.Setting{Resolution100ns: 10000}
	args := []string{"apply", "--resolution", "10000", "--no-console", "--no-esc", "--as-startup"}
	const spaced = `C:\Program Files\tick scope\tickscope.exe`
	const spacedHolder = `C:\Program Files\tick scope\tickscope-holder.exe`
	tests := []struct {
		name        string
		exe         string
		executables map[string]uint16
		subErr      error
		want        string // the error, or "" for a task that runs wantExe
		wantExe     string
	}{
		{"beside it, GUI", windowsExe, map[string]uint16{windowsHolder: seam.IMAGE_SUBSYSTEM_WINDOWS_GUI}, nil, "", windowsHolder},
		{"absent", windowsExe, map[string]uint16{windowsExe: seam.IMAGE_SUBSYSTEM_WINDOWS_CUI}, nil,
			`--persist refused: the windowless holder tickscope-holder.exe is not beside C:\Tools\tickscope.exe (the logon task runs it so that no console window opens at logon); it ships in the release archive, or build it in tickscope's source directory with: go build -ldflags -H=windowsgui -o C:\Tools\tickscope-holder.exe ./cmd/tickscope`, ""},
		{"absent, from a path with spaces", spaced, map[string]uint16{}, nil,
			`go build -ldflags -H=windowsgui -o "` + spacedHolder + `" ./cmd/tickscope`, ""},
		{"a console program under the holder's name", windowsExe, map[string]uint16{windowsHolder: seam.IMAGE_SUBSYSTEM_WINDOWS_CUI}, nil,
			`--persist refused: C:\Tools\tickscope-holder.exe is not a GUI-subsystem program (PE subsystem 3, not 2), so a console window would open at every logon; rebuild it`, ""},
		{"unreadable", windowsExe, map[string]uint16{}, errors.New("bad PE header"), "read the PE header of " + windowsHolder, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, dryRun := range []bool{false, true} {
				h, sys, st := persistMachine(t)
				sys.Exe, sys.Executables = tt.exe, tt.executables
				system := seam.System(sys)
				if tt.subErr != nil {
					system = &subsystemErr{sys, tt.subErr}
				}
				res, err := startup.Persist(h, system, query(t, h), req, args, startup.PersistOptions{Version: "test", DryRun: dryRun, Sleep: func(time.Duration) {}})
				if tt.want != "" {
					wantError(t, err, tt.want)
					if st.Installs != 0 || st.Starts != 0 {
						t.Errorf("refused, yet installed %d and started %d times", st.Installs, st.Starts)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if res.Exe != tt.wantExe {
					t.Errorf("dry run %v: the task runs %q, want %q", dryRun, res.Exe, tt.wantExe)
				}
				definition := st.Definition
				if dryRun {
					definition = []byte(res.Definition)
				}
				if installed, err := persist.ParseTask(definition); err != nil || installed.Exe != tt.wantExe {
					t.Errorf("dry run %v: the task reads back as %+v, %v; want it to run %q", dryRun, installed, err, tt.wantExe)
				}
			}
		})
	}
}

// subsystemErr is a System whose PE headers cannot be read.
type subsystemErr struct {
	*sim.System
	err error
}

func (s *subsystemErr) ExeSubsystem(string) (uint16, error) { return 0, s.err }

func TestPersistOnLinuxRunsItself(t *testing.T) {
	dma := int32(0)
	sys := &sim.System{Exe: "/usr/local/bin/tickscope", IsElevated: true, Executables: map[string]uint16{}}
	st := sys.NewStartup("systemd unit tickscope-holder.service")
	res, err := startup.Persist(&linuxHost{}, sys, linuxReport(0), timerinfo.Setting{CPUDMALatencyUs: &dma}, []string{"apply", "--dma-latency", "0", "--no-esc", "--as-startup"}, startup.PersistOptions{Version: "test", Sleep: func(time.Duration) {}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Exe != sys.Exe || !strings.Contains(string(st.Definition), `ExecStart="/usr/local/bin/tickscope" "apply"`) {
		t.Errorf("the unit runs %q:\n%s\nwant this executable, no holder beside it", res.Exe, st.Definition)
	}
}

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
		if got := hold.ReadStartup(sys, true); got.Stale != tt.wantStale {
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
			rep, err := hold.Status(context.Background(), h, sys)
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
			if got := hold.ReadStartup(sys, true).Log; got != "tickscope: error: NtSetTimerResolution failed" {
				t.Errorf("status shows the log's last line as %q", got)
			}
			if got := hold.ReadStartup(sys, false).Log; got != "" {
				t.Errorf("status elsewhere than Windows shows %q, want no log", got)
			}
		})
	}
	for _, state := range []string{filepath.Join(t.TempDir(), "none"), ""} {
		if got := hold.ReadStartup(&sim.System{State: state, StartupMechanism: &sim.Startup{}}, true); got.Log != "" {
			t.Errorf("no log in %q: status shows %q", state, got.Log)
		}
	}
}

// holderLog is the holder's log in sys's state directory.
func holderLog(t *testing.T, sys seam.System) string {
	t.Helper()
	path, err := timerstate.HolderLogPath(sys)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDoubleClicked(t *testing.T) {
	for console, want := range map[seam.Console]bool{seam.ConsoleShared: false, seam.ConsoleNone: false, seam.ConsoleAlone: true} {
		if got := hold.DoubleClicked(&sim.System{ConsoleState: console}); got != want {
			t.Errorf("console %d: double-clicked %v, want %v", console, got, want)
		}
	}
}

// TestSecondHolderKeepsTheLog: a second start of the holder while one runs
// fails on the holder lock; it must append its reason to the running
// holder's log, not empty it.
func TestSecondHolderKeepsTheLog(t *testing.T) {
	args := []string{"apply", "--resolution", "10000", "--no-console", "--no-esc", "--as-startup"}
	sys := &sim.System{State: t.TempDir(), ConsoleState: seam.ConsoleNone}
	var stdout, stderr io.Writer
	closeLog := startup.LogHolderOutput(sys, args, &stdout, &stderr)
	io.WriteString(stdout, "holding\n")
	closeLog()
	sys.HolderRunning, sys.HolderPID = true, 8
	closeLog = startup.LogHolderOutput(sys, args, &stdout, &stderr)
	io.WriteString(stderr, "tickscope: error: another startup holder runs\n")
	closeLog()
	data, err := os.ReadFile(holderLog(t, sys))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "holding\n") || !strings.HasSuffix(string(data), "another startup holder runs\n") {
		t.Errorf("the log after a second start:\n%s", data)
	}
}
