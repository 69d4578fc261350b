package startup_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/sim/simtest"

	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/startup"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

func TestPersistRefusals(t *testing.T) {
	req := timerinfo.Setting{Resolution100ns: 10000}
	args := []string{"apply", "--resolution", "10000"}
	tests := []struct {
		name  string
		setUp func(h *simtest.WindowsHost, sys *sim.System, st *sim.Startup)
		want  string
	}{
		{"per-process build", func(h *simtest.WindowsHost, _ *sim.System, _ *sim.Startup) { h.Global = nil },
			"--persist refused: requests are per-process here (per-process: Windows 10 2004+)"},
		{"Windows 10 ignores the key", func(h *simtest.WindowsHost, _ *sim.System, _ *sim.Startup) { h.Build = 19045 },
			"this build cannot make them global"},
		{"no startup mechanism", func(_ *simtest.WindowsHost, sys *sim.System, _ *sim.Startup) { sys.StartupMechanism = nil },
			"not supported"},
		{"go run's build", func(_ *simtest.WindowsHost, sys *sim.System, _ *sim.Startup) {
			sys.Exe = filepath.Join(sys.Temp, "go-build123", "b001", "exe", "tickscope.exe")
		}, "is a temporary build (go run)"},
		{"a path Task Scheduler expands", func(_ *simtest.WindowsHost, sys *sim.System, _ *sim.Startup) {
			sys.Exe = `C:\%APPDATA%\tickscope.exe`
		}, "contains %APPDATA%, which Task Scheduler would expand"},
		{"a foreign task", func(_ *simtest.WindowsHost, _ *sim.System, st *sim.Startup) {
			st.Definition = simtest.TaskOf(t, `C:\Other\timer.exe`, false)
		}, "a Task Scheduler task tickscope exists that tickscope did not create: it is left alone; delete it by hand with: delete Task Scheduler task tickscope by hand"},
		{"another user's task", func(_ *simtest.WindowsHost, _ *sim.System, st *sim.Startup) {
			data, err := persist.TaskXML(persist.Task{Exe: simtest.WindowsExe, Args: []string{"apply", "--ms", "1"}, Description: persist.Marker("0.1.0"), DelaySeconds: 15, UserSID: "S-1-5-21-1-2-3-1002"})
			if err != nil {
				t.Fatal(err)
			}
			st.Definition = data
		}, "is another user's (its principal is S-1-5-21-1-2-3-1002"},
		{"an unreadable task", func(_ *simtest.WindowsHost, _ *sim.System, st *sim.Startup) {
			st.Definition = []byte("<Task")
		}, "did not create"},
		{"executable unknown", func(_ *simtest.WindowsHost, sys *sim.System, _ *sim.Startup) { sys.ExeErr = errors.New("gone") },
			"find this executable: gone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, sys, st := simtest.PersistMachine(t)
			tt.setUp(h, sys, st)
			res, err := startup.Persist(h, sys, simtest.Query(t, h), req, args, startup.PersistOptions{Version: "test", Sleep: func(time.Duration) {}})
			if res != nil {
				t.Errorf("refused with a result: %+v", res)
			}
			wantError(t, err, tt.want)
			if st.Installs != 0 || st.Starts != 0 {
				t.Errorf("a refusal installed %d and started %d", st.Installs, st.Starts)
			}
		})
	}
}

func TestPersistOnLinuxNeedsRoot(t *testing.T) {
	sys := &sim.System{Exe: "/usr/local/bin/tickscope", Temp: "/tmp"}
	st := sys.NewStartup("systemd unit /etc/systemd/system/tickscope-holder.service")
	zero := int32(0)
	h := &linuxHost{dma: timerinfo.DMALatencyDefaultUs}
	_, err := startup.Persist(h, sys, simtest.LinuxReport(timerinfo.DMALatencyDefaultUs), timerinfo.Setting{CPUDMALatencyUs: &zero}, []string{"apply"}, startup.PersistOptions{})
	wantError(t, err, "needs root")
	sys.IsElevated = true
	sys.Exe = "/tmp/go-build42/b001/exe/tickscope"
	_, err = startup.Persist(h, sys, simtest.LinuxReport(timerinfo.DMALatencyDefaultUs), timerinfo.Setting{CPUDMALatencyUs: &zero}, []string{"apply"}, startup.PersistOptions{})
	wantError(t, err, "is a temporary build (go run)")
	// As root, from an installed binary, the unit is written and the holder
	// found running with its setting in force.
	sys.Exe = "/usr/local/bin/tickscope"
	st.OnStart = func() { sys.HolderRunning, sys.HolderPID, h.dma = true, 321, 0 }
	res, err := startup.Persist(h, sys, simtest.LinuxReport(timerinfo.DMALatencyDefaultUs), timerinfo.Setting{CPUDMALatencyUs: &zero},
		[]string{"apply", "--dma-latency", "0", "--no-esc", "--as-startup"}, startup.PersistOptions{Version: "test", Sleep: func(time.Duration) {}})
	if err != nil || !res.Running || res.PID != 321 || res.When != "boot" {
		t.Fatalf("Persist = %+v, %v", res, err)
	}
	if !strings.Contains(string(st.Definition), `ExecStart="/usr/local/bin/tickscope" "apply" "--dma-latency" "0" "--no-esc" "--as-startup"`) {
		t.Errorf("the unit:\n%s", st.Definition)
	}
}

func TestPersistInstallsStartsAndWatchesTheHolder(t *testing.T) {
	req := timerinfo.Setting{Resolution100ns: 10000}
	args := []string{"apply", "--resolution", "10000", "--no-console", "--no-esc", "--as-startup"}
	tests := []struct {
		name         string
		existing     bool // our own task is installed already: it is replaced
		startErr     error
		holderStarts bool
		period       uint32 // the period in force once it started
		wantRunning  bool
	}{
		{"in force", false, nil, true, 9996, true},
		{"replaces its own task", true, nil, true, 10010, true},
		{"a coarser period is not the setting", false, nil, true, 10011, false},
		{"the holder does not run", false, nil, false, 0, false},
		{"start fails", false, errors.New("access denied"), false, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, sys, st := simtest.PersistMachine(t)
			if tt.existing {
				st.Definition = simtest.TaskOf(t, `C:\Old\tickscope.exe`, true)
			}
			st.StartErr = tt.startErr
			st.OnStart = func() {
				sys.HolderRunning, sys.HolderPID = tt.holderStarts, 77
				h.Current = tt.period
			}
			looks := 0
			res, err := startup.Persist(h, sys, simtest.Query(t, h), req, args, startup.PersistOptions{Version: "test", Sleep: func(time.Duration) { looks++ }})
			if err != nil {
				t.Fatal(err)
			}
			if st.Installs != 1 {
				t.Errorf("installed %d times", st.Installs)
			}
			installed, err := persist.ParseTask(st.Definition)
			if err != nil || installed.Exe != simtest.WindowsHolder || !installed.Ours() || strings.Join(installed.Args, " ") != strings.Join(args, " ") {
				t.Errorf("installed %+v, %v", installed, err)
			}
			if res.Running != tt.wantRunning || (tt.startErr != nil) != (res.StartErr != nil) {
				t.Errorf("Persist = %+v", res)
			}
			// Not running: it looked for 2 s, every 100 ms.
			if tt.startErr == nil && !tt.wantRunning && looks != 19 {
				t.Errorf("looked %d times after the first, want 19", looks)
			}
		})
	}
}

func TestPersistDryRunChangesNothing(t *testing.T) {
	h, sys, st := simtest.PersistMachine(t)
	res, err := startup.Persist(h, sys, simtest.Query(t, h), timerinfo.Setting{Resolution100ns: 10000}, []string{"apply", "--resolution", "10000"}, startup.PersistOptions{Version: "test", DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Definition, "<Command>"+simtest.WindowsHolder+"</Command>") || !strings.Contains(res.Definition, "[tickscope holder, build test]") {
		t.Errorf("the dry run's task:\n%s", res.Definition)
	}
	if st.Installs+st.Starts != 0 || st.Definition != nil {
		t.Errorf("a dry run installed %d, started %d", st.Installs, st.Starts)
	}
}

func TestRemoveStartup(t *testing.T) {
	tests := []struct {
		name       string
		scenario   string
		definition []byte
		running    bool
		pid        int
		want       startup.RemoveResult
		wantErr    string
		wantStops  int
	}{
		{"nothing", "knee-26100", nil, false, 0, startup.RemoveResult{}, "", 0},
		{"installed and running", "knee-26100", simtest.TaskOf(t, simtest.WindowsExe, true), true, 5, startup.RemoveResult{Installed: true, HolderPID: 5, Ended: true, Deleted: true}, "", 1},
		{"installed, not running", "knee-26100", simtest.TaskOf(t, simtest.WindowsExe, true), false, 0, startup.RemoveResult{Installed: true, Deleted: true}, "", 1},
		{"a holder whose pid is unreadable", "knee-26100", nil, true, 0, startup.RemoveResult{Ended: true}, "", 1},
		{"still raised afterwards", "contaminated", simtest.TaskOf(t, simtest.WindowsExe, true), true, 5, startup.RemoveResult{Installed: true, HolderPID: 5, Ended: true, Deleted: true,
			StillRaised: "the timer is still at 0.5000 ms, finer than the coarsest 15.6250 ms: another program holds a request"}, "", 1},
		{"foreign", "knee-26100", simtest.TaskOf(t, `D:\x.exe`, false), true, 5, startup.RemoveResult{}, "was not created by tickscope: it is left alone; delete it by hand with: delete task by hand", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys := &sim.System{HolderRunning: tt.running, HolderPID: tt.pid}
			st := sys.NewStartup("task")
			st.Definition = tt.definition
			res, err := startup.RemoveStartup(simtest.NewWindows(t, tt.scenario), sys)
			if tt.wantErr != "" {
				wantError(t, err, tt.wantErr)
				if st.Deletes != 0 || st.Stops != 0 || st.Definition == nil {
					t.Errorf("a foreign task was touched: %d stops, %d deletes", st.Stops, st.Deletes)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.want.Startup = "task"
			if *res != tt.want {
				t.Errorf("RemoveStartup = %+v\nwant %+v", *res, tt.want)
			}
			if st.Stops != tt.wantStops {
				t.Errorf("stopped %d times, want %d", st.Stops, tt.wantStops)
			}
			if _, running := sys.Holder(); running {
				t.Error("the holder still runs")
			}
		})
	}
	// Another user's task, tickscope's all the same: left alone.
	sys := &sim.System{}
	st := sys.NewStartup("task")
	other, err := persist.TaskXML(persist.Task{Exe: simtest.WindowsExe, Args: []string{"apply", "--ms", "1"}, Description: persist.Marker("0.1.0"), DelaySeconds: 15, UserSID: "S-1-5-21-1-2-3-1002"})
	if err != nil {
		t.Fatal(err)
	}
	st.Definition = other
	_, err = startup.RemoveStartup(simtest.NewWindows(t, "knee-26100"), sys)
	wantError(t, err, "is another user's (its principal is S-1-5-21-1-2-3-1002")
	if st.Deletes != 0 || st.Stops != 0 {
		t.Errorf("another user's task was touched: %d stops, %d deletes", st.Stops, st.Deletes)
	}
	// The caller's own is removed.
	st.Definition, err = persist.TaskXML(persist.Task{Exe: simtest.WindowsExe, Args: []string{"apply", "--ms", "1"}, Description: persist.Marker("0.1.0"), DelaySeconds: 15, UserSID: sim.FakeSID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := startup.RemoveStartup(simtest.NewWindows(t, "knee-26100"), sys); err != nil || st.Deletes != 1 {
		t.Errorf("the caller's own task: %v, %d deletes", err, st.Deletes)
	}

	_, err = startup.RemoveStartup(&linuxHost{}, &sim.System{})
	if !isUsage(err) {
		t.Errorf("no startup mechanism: %v, want a usage error", err)
	}
}

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
		{"beside it, GUI", simtest.WindowsExe, map[string]uint16{simtest.WindowsHolder: seam.IMAGE_SUBSYSTEM_WINDOWS_GUI}, nil, "", simtest.WindowsHolder},
		{"absent", simtest.WindowsExe, map[string]uint16{simtest.WindowsExe: seam.IMAGE_SUBSYSTEM_WINDOWS_CUI}, nil,
			`--persist refused: the windowless holder tickscope-holder.exe is not beside C:\Tools\tickscope.exe (the logon task runs it so that no console window opens at logon); it ships in the release archive, or build it in tickscope's source directory with: go build -ldflags -H=windowsgui -o C:\Tools\tickscope-holder.exe ./cmd/tickscope`, ""},
		{"absent, from a path with spaces", spaced, map[string]uint16{}, nil,
			`go build -ldflags -H=windowsgui -o "` + spacedHolder + `" ./cmd/tickscope`, ""},
		{"a console program under the holder's name", simtest.WindowsExe, map[string]uint16{simtest.WindowsHolder: seam.IMAGE_SUBSYSTEM_WINDOWS_CUI}, nil,
			`--persist refused: C:\Tools\tickscope-holder.exe is not a GUI-subsystem program (PE subsystem 3, not 2), so a console window would open at every logon; rebuild it`, ""},
		{"unreadable", simtest.WindowsExe, map[string]uint16{}, errors.New("bad PE header"), "read the PE header of " + simtest.WindowsHolder, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, dryRun := range []bool{false, true} {
				h, sys, st := simtest.PersistMachine(t)
				sys.Exe, sys.Executables = tt.exe, tt.executables
				system := seam.System(sys)
				if tt.subErr != nil {
					system = &subsystemErr{sys, tt.subErr}
				}
				res, err := startup.Persist(h, system, simtest.Query(t, h), req, args, startup.PersistOptions{Version: "test", DryRun: dryRun, Sleep: func(time.Duration) {}})
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

func TestPersistOnLinuxRunsItself(t *testing.T) {
	dma := int32(0)
	sys := &sim.System{Exe: "/usr/local/bin/tickscope", IsElevated: true, Executables: map[string]uint16{}}
	st := sys.NewStartup("systemd unit tickscope-holder.service")
	res, err := startup.Persist(&linuxHost{}, sys, simtest.LinuxReport(0), timerinfo.Setting{CPUDMALatencyUs: &dma}, []string{"apply", "--dma-latency", "0", "--no-esc", "--as-startup"}, startup.PersistOptions{Version: "test", Sleep: func(time.Duration) {}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Exe != sys.Exe || !strings.Contains(string(st.Definition), `ExecStart="/usr/local/bin/tickscope" "apply"`) {
		t.Errorf("the unit runs %q:\n%s\nwant this executable, no holder beside it", res.Exe, st.Definition)
	}
}

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

func TestPersistWhile(t *testing.T) {
	h, sys, st := simtest.PersistMachine(t)
	sys.Executables = map[string]uint16{simtest.WindowsHolder: 2}
	req := timerinfo.Setting{Resolution100ns: 10000}
	args := []string{"apply", "--resolution", "10000", "--no-console", "--no-esc", "--as-startup", "--while", "game.exe"}
	h.Global = nil
	_, err := startup.Persist(h, sys, simtest.Query(t, h), req, args, startup.PersistOptions{Version: "1", While: []string{"game.exe"}, Sleep: func(time.Duration) {}})
	wantError(t, err, "a holder at logon would speed up only itself, not game.exe")
	h.Global = simtest.One()
	st.OnStart = func() { sys.HolderRunning, sys.HolderPID = true, 77 }
	res, err := startup.Persist(h, sys, simtest.Query(t, h), req, args, startup.PersistOptions{Version: "1", While: []string{"game.exe"}, Sleep: func(time.Duration) {}})
	if err != nil || !res.Running || res.PID != 77 || len(res.While) != 1 {
		t.Fatalf("Persist = %+v, %v; want the holder running, not holding", res, err)
	}
	installed, err := persist.ParseTask(st.Definition)
	if err != nil || fmt.Sprint(installed.While()) != "[game.exe]" {
		t.Errorf("the task's --while: %v, %v", installed.While(), err)
	}
}

func TestPersistWhileRefusals(t *testing.T) {
	req := timerinfo.Setting{Resolution100ns: 10000}
	for _, tt := range []struct {
		name   string
		dryRun bool
		while  []string
		setUp  func(h *simtest.WindowsHost)
		want   string
	}{
		{"per-process requests (Windows 11 without the key)", false, []string{"game.exe"}, func(h *simtest.WindowsHost) { h.Global = nil },
			"--persist refused: requests are per-process here (per-process: Windows 10 2004+), so a holder at logon would speed up only itself, not game.exe; "},
		{"per-process requests, a dry run too", true, []string{"game.exe"}, func(h *simtest.WindowsHost) { h.Global = nil },
			"so a holder at logon would speed up only itself, not game.exe"},
		{"per-process requests, two programs", false, []string{"game.exe", `C:\Games\other.exe`}, func(h *simtest.WindowsHost) { h.Global = nil },
			`would speed up only itself, not game.exe or C:\Games\other.exe`},
		{"Windows 10, which ignores the key", false, []string{"game.exe"}, func(h *simtest.WindowsHost) { h.Build = 19045 },
			"not game.exe; this build cannot make them global"},
		{"Windows 10, a dry run too", true, []string{"game.exe"}, func(h *simtest.WindowsHost) { h.Build = 19045 },
			"this build cannot make them global"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, sys, st := simtest.PersistMachine(t)
			sys.Executables = map[string]uint16{simtest.WindowsHolder: 2}
			tt.setUp(h)
			args := []string{"apply", "--resolution", "10000", "--no-console", "--no-esc", "--as-startup", "--while", strings.Join(tt.while, ",")}
			res, err := startup.Persist(h, sys, simtest.Query(t, h), req, args, startup.PersistOptions{Version: "1", While: tt.while, DryRun: tt.dryRun, Sleep: func(time.Duration) {}})
			if res != nil {
				t.Errorf("refused with a result: %+v", res)
			}
			wantError(t, err, tt.want)
			if isUsage(err) {
				t.Errorf("%v is a usage error (exit 2), want exit 1", err)
			}
			if st.Installs+st.Starts != 0 || st.Definition != nil {
				t.Errorf("a refusal installed %d and started %d: %s", st.Installs, st.Starts, st.Definition)
			}
		})
	}
}

// The startup holder is the holder command without --as-service, as the task
// and unit run it, or apply --as-startup, as those earlier versions
// installed run it; the boot service and a person's apply are not.
func TestAsStartup(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want bool
	}{
		{[]string{"holder", "--resolution", "10000", "--no-console", "--no-esc"}, true},
		{[]string{"holder", "--dma-latency", "0", "--no-esc", "--while", "game"}, true},
		{[]string{"holder", "--as-service", "--resolution", "10000", "--no-esc"}, false},
		{[]string{"apply", "--resolution", "10000", "--no-console", "--no-esc", "--as-startup"}, true},
		{[]string{"apply", "--resolution", "10000", "--no-esc", "--as-service"}, false},
		{[]string{"apply", "--ms", "1"}, false},
		{nil, false},
	} {
		if got := startup.AsStartup(tt.args); got != tt.want {
			t.Errorf("startup.AsStartup(%q) = %v, want %v", tt.args, got, tt.want)
		}
	}
}
