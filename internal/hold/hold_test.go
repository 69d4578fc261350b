package hold_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/sim/simtest"

	"github.com/tickscope/tickscope/internal/hold"
	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

func wantError(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want one containing %q", err, want)
	}
}

func isUsage(err error) bool {
	var usage *options.UsageError
	return errors.As(err, &usage)
}

func TestPlanApplyRefusesBadCommandLines(t *testing.T) {
	win := simtest.Query(t, simtest.NewWindows(t, "knee-26100"))
	lin := simtest.LinuxReport(timerinfo.DMALatencyDefaultUs)
	tests := []struct {
		name string
		q    *timerinfo.Report
		f    hold.ApplyFlags
		want string
	}{
		{"for 0", win, hold.ApplyFlags{MS: 1, MSSet: true, ForSet: true}, "--for 0s: allowed above 0"},
		{"dry run alone", win, hold.ApplyFlags{MS: 1, MSSet: true, DryRun: true}, "--dry-run shows what --persist would install"},
		{"persist for", win, hold.ApplyFlags{MS: 1, MSSet: true, Persist: true, For: time.Second, ForSet: true}, "--persist and --for 1s"},
		{"no period", win, hold.ApplyFlags{}, "apply needs the period to hold: --resolution R (100 ns units, 5000..156250 here) or --ms X"},
		{"both periods", win, hold.ApplyFlags{Resolution: 5000, ResolutionSet: true, MS: 1, MSSet: true}, "give one of them, not both"},
		{"period out of range", win, hold.ApplyFlags{Resolution: 200000, ResolutionSet: true}, "--resolution 200000: allowed 5000..156250"},
		{"no linux setting", lin, hold.ApplyFlags{}, "apply needs a setting: --dma-latency US, or --pid PID --slack D"},
		{"pid without slack", lin, hold.ApplyFlags{PID: 1, PIDSet: true}, "--pid 1 needs --slack D"},
		{"slack without pid", lin, hold.ApplyFlags{Slack: time.Microsecond, SlackSet: true}, "--slack 1µs needs --pid PID"},
		{"pid and dma", lin, hold.ApplyFlags{PID: 1, PIDSet: true, Slack: 1, SlackSet: true, DMALatencySet: true}, "give one setting at a time"},
		{"pid 0", lin, hold.ApplyFlags{PIDSet: true, SlackSet: true}, "--pid 0: a process id above 0"},
		{"slack too large", lin, hold.ApplyFlags{PID: 1, PIDSet: true, Slack: 2 * time.Second, SlackSet: true}, "--slack 2s: allowed 0..1s"},
		{"slack with for", lin, hold.ApplyFlags{PID: 1, PIDSet: true, SlackSet: true, For: time.Second, ForSet: true}, "--for 1s: setting a process's slack returns at once"},
		{"slack with persist", lin, hold.ApplyFlags{PID: 1, PIDSet: true, SlackSet: true, Persist: true}, "--persist true: setting a process's slack"},
		{"dma negative", lin, hold.ApplyFlags{DMALatency: -1, DMALatencySet: true}, "--dma-latency -1: allowed 0..2000000000 µs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := hold.PlanApply(tt.q, tt.f)
			if plan != nil || !isUsage(err) {
				t.Fatalf("PlanApply = %+v, %v; want a usage error", plan, err)
			}
			wantError(t, err, tt.want)
		})
	}
}

func TestPlanApplyPlans(t *testing.T) {
	win := simtest.Query(t, simtest.NewWindows(t, "knee-26100"))
	lin := simtest.LinuxReport(timerinfo.DMALatencyDefaultUs)
	plan, err := hold.PlanApply(win, hold.ApplyFlags{MS: 1, MSSet: true, Persist: true})
	if err != nil || plan.Kind != hold.InstallHolder || plan.Setting.Resolution100ns != 10000 ||
		strings.Join(plan.HolderArgs, " ") != "holder --resolution 10000 --no-console --no-esc" {
		t.Errorf("Windows --persist: %+v, %v", plan, err)
	}
	plan, err = hold.PlanApply(lin, hold.ApplyFlags{DMALatency: 0, DMALatencySet: true})
	if err != nil || plan.Kind != hold.HoldHere || plan.Setting.CPUDMALatencyUs == nil || *plan.Setting.CPUDMALatencyUs != 0 {
		t.Errorf("Linux --dma-latency 0: %+v, %v", plan, err)
	}
	// apply --pid takes slack 0: it restores the process's default.
	plan, err = hold.PlanApply(lin, hold.ApplyFlags{PID: 7, PIDSet: true, SlackSet: true})
	if err != nil || plan.Kind != hold.SetProcessSlack || plan.PID != 7 || plan.Slack != 0 {
		t.Errorf("Linux --pid 7 --slack 0: %+v, %v", plan, err)
	}
	if _, err := hold.PlanApply(&timerinfo.Report{OS: "darwin", Other: &timerinfo.Other{}}, hold.ApplyFlags{}); !errors.Is(err, seam.ErrUnsupported) {
		t.Errorf("darwin: %v, want ErrUnsupported", err)
	}
}

func TestSetSlackPrintsBeforeAfterAndUndo(t *testing.T) {
	sys := &sim.System{Slack: map[int]int64{42: 50_000}}
	change, err := hold.SetSlack(sys, 42, time.Microsecond, func(msg string) { t.Errorf("warned %q", msg) })
	if err != nil {
		t.Fatal(err)
	}
	want := hold.SlackChange{PID: 42, SlackBeforeNs: 50_000, SlackAfterNs: 1000, Undo: "tickscope apply --pid 42 --slack 50000ns"}
	if *change != want {
		t.Errorf("SetSlack = %+v, want %+v", *change, want)
	}
	// The undo puts it back.
	if _, err := hold.SetSlack(sys, 42, time.Duration(change.SlackBeforeNs), nil); err != nil || sys.Slack[42] != 50_000 {
		t.Errorf("undo: slack %d, %v", sys.Slack[42], err)
	}
	if _, err := hold.SetSlack(sys, 43, time.Microsecond, nil); !errors.Is(err, seam.ErrNoProcess) {
		t.Errorf("a pid that names no process: %v", err)
	}
}

// TestSetSlackRefusesKernelThreads: kthreadd (pid 2), and any kernel
// thread, is refused as bad input and left as it was; init (pid 1) is set,
// with a warning; a missing process's error names the call that failed.
func TestSetSlackRefusesKernelThreads(t *testing.T) {
	sys := &sim.System{Slack: map[int]int64{1: 50_000, 2: 50_000, 77: 50_000, 500: 50_000}, KernelThreads: map[int]bool{2: true, 77: true}}
	for _, pid := range []int{2, 77} {
		_, err := hold.SetSlack(sys, pid, time.Microsecond, nil)
		var usage *options.UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), fmt.Sprintf("--pid %d: process %d (fake) is a kernel thread", pid, pid)) {
			t.Errorf("pid %d: %v, want a usage error naming the kernel thread", pid, err)
		}
		if sys.Slack[pid] != 50_000 {
			t.Errorf("pid %d: slack changed to %d", pid, sys.Slack[pid])
		}
	}
	var warnings []string
	if _, err := hold.SetSlack(sys, 1, time.Microsecond, func(msg string) { warnings = append(warnings, msg) }); err != nil || sys.Slack[1] != 1000 {
		t.Errorf("pid 1: %v, slack %d", err, sys.Slack[1])
	}
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], "process 1 (fake) is init") {
		t.Errorf("pid 1 warnings %q", warnings)
	}
	if _, err := hold.SetSlack(sys, 500, time.Microsecond, func(msg string) { t.Errorf("pid 500 warned %q", msg) }); err != nil {
		t.Error(err)
	}
	_, err := hold.SetSlack(sys, 43, time.Microsecond, nil)
	var osErr *seam.OSError
	if !errors.As(err, &osErr) || !errors.Is(err, seam.ErrNoProcess) || osErr.Call == "" {
		t.Errorf("a pid that names no process: %v, want an OS error naming the call", err)
	}
}

func TestUntilText(t *testing.T) {
	win := &timerinfo.Report{Windows: &timerinfo.Windows{}}
	lin := simtest.LinuxReport(0)
	tests := []struct {
		q         *timerinfo.Report
		holdFor   time.Duration
		noEsc     bool
		noConsole bool
		want      string
	}{
		{lin, 0, false, false, "ESC or Ctrl+C"},
		{lin, time.Second, false, false, "ESC, Ctrl+C or 1s elapses"},
		{lin, time.Second, true, false, "Ctrl+C or 1s elapses"},
		{win, 0, false, false, "ESC, Ctrl+C or the console closes"},
		{win, time.Second, false, false, "ESC, Ctrl+C, the console closes or 1s elapses"},
		{win, time.Second, true, false, "Ctrl+C, the console closes or 1s elapses"},
		{win, 0, false, true, "ESC (anywhere on the desktop)"},
		{win, 200 * time.Millisecond, true, true, "200ms elapses"},
		{win, 0, true, true, "the process is ended"},
	}
	for _, tt := range tests {
		if got := hold.UntilText(tt.q, tt.holdFor, tt.noEsc, tt.noConsole); got != tt.want {
			t.Errorf("UntilText(windows %v, for %v, noEsc %v, noConsole %v) = %q, want %q", tt.q.Windows != nil, tt.holdFor, tt.noEsc, tt.noConsole, got, tt.want)
		}
	}
}

func TestHoldOnTheModel(t *testing.T) {
	h := simtest.NewWindows(t, "contaminated") // another process holds 0.5 ms
	sys := &sim.System{Escape: func(stop func()) { stop() }, ThrottlingErr: errors.New("ERROR_INVALID_PARAMETER")}
	q := simtest.Query(t, h)
	var held *hold.HoldReport
	rep, err := hold.Hold(context.Background(), h, sys, q, timerinfo.Setting{Resolution100ns: 10000}, hold.HoldOptions{
		NoConsole: true, AsStartup: true,
		Holding: func(r *hold.HoldReport) {
			held = r
			if sys.Locks[seam.HolderLock] == 0 {
				t.Error("the startup holder holds without its lock")
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if held != rep || rep.EndedBy != "esc" || !sys.Detached || !sys.EscapeWatched {
		t.Errorf("Hold = %+v, detached %v, ESC watched %v", rep, sys.Detached, sys.EscapeWatched)
	}
	if rep.Granted.Resolution100ns != 5000 || len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "finer than requested") {
		t.Errorf("granted %v, warnings %q", rep.Granted, rep.Warnings)
	}
	if rep.Check == nil || rep.Check.Samples != 50 || rep.Check.Method != "sleep" {
		t.Errorf("check %+v", rep.Check)
	}
	if !strings.HasPrefix(rep.ThrottlingOptOut, "not available on this build (ERROR_INVALID_PARAMETER)") || rep.Until != "ESC (anywhere on the desktop)" {
		t.Errorf("throttling %q, until %q", rep.ThrottlingOptOut, rep.Until)
	}
	if len(sys.Locks) != 0 || h.Observe().Current100ns != 5000 {
		t.Errorf("after the hold: locks %v, period %d", sys.Locks, h.Observe().Current100ns)
	}
	// A second startup holder is refused.
	sys.Locks = map[string]int{seam.HolderLock: 12}
	_, err = hold.Hold(context.Background(), h, sys, q, timerinfo.Setting{Resolution100ns: 10000}, hold.HoldOptions{AsStartup: true})
	wantError(t, err, "another startup holder runs: another tickscope holder is running (process 12)")
}

// A hold of --for D reports having held at least D, however long Holding
// takes (it prints, and the console may be slow): --for is armed before
// Holding is told, and the time held counts from before that (Wine's
// apply_while.txtar saw "released after 2.998s" for --for 3s).
func TestHoldForReportsAtLeastFor(t *testing.T) {
	h := simtest.NewWindows(t, "knee-26100")
	const holdFor = 60 * time.Millisecond
	rep, err := hold.Hold(context.Background(), h, &sim.System{}, simtest.Query(t, h), timerinfo.Setting{Resolution100ns: 10000}, hold.HoldOptions{
		NoEsc: true, For: holdFor,
		Holding: func(*hold.HoldReport) { time.Sleep(holdFor / 2) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.EndedBy != "for" || time.Duration(rep.HeldNs) < holdFor {
		t.Errorf("ended by %q after %v; want --for, and at least %v", rep.EndedBy, time.Duration(rep.HeldNs), holdFor)
	}
}

// What the hold's end cannot arm (here the desktop-wide ESC) is told once,
// by Holding with the report's other warnings, after the holding line:
// not also by Warn as it is armed, before anything is held.
func TestHoldTellsAnArmingWarningOnce(t *testing.T) {
	h := simtest.NewWindows(t, "knee-26100")
	var told, atHolding []string
	rep, err := hold.Hold(context.Background(), h, &sim.System{EscapeErr: errors.New("SetWindowsHookExW: denied")}, simtest.Query(t, h), timerinfo.Setting{Resolution100ns: 10000}, hold.HoldOptions{
		NoConsole: true, For: time.Millisecond,
		Warn:    func(msg string) { told = append(told, msg) },
		Holding: func(rep *hold.HoldReport) { atHolding = append(atHolding, rep.Warnings...) },
	})
	if err != nil {
		t.Fatal(err)
	}
	escape := func(w []string) int {
		n := 0
		for _, msg := range w {
			if strings.Contains(msg, "ESC cannot be watched: SetWindowsHookExW: denied") {
				n++
			}
		}
		return n
	}
	if escape(told) != 0 || escape(atHolding) != 1 || escape(rep.Warnings) != 1 {
		t.Errorf("the ESC warning told by Warn %d times (%q), at Holding %d (%q), in the report %d; want 0, 1, 1", escape(told), told, escape(atHolding), atHolding, escape(rep.Warnings))
	}
}

func TestRunSetting(t *testing.T) {
	win := simtest.Query(t, simtest.NewWindows(t, "knee-26100"))
	lin := simtest.LinuxReport(0)
	tests := []struct {
		name string
		q    *timerinfo.Report
		f    hold.RunFlags
		want string // error, or the setting
	}{
		{"windows none", win, hold.RunFlags{}, "tickscope run needs a setting: --resolution R or --ms X"},
		{"windows ms", win, hold.RunFlags{MS: 1, MSSet: true}, "1.0000 ms (10000 x 100ns)"},
		{"linux none", lin, hold.RunFlags{}, "tickscope run needs a setting: --slack D and/or --dma-latency US"},
		{"slack 0 is refused", lin, hold.RunFlags{SlackSet: true}, "--slack 0s: allowed 1ns..1s (0 would reset the default)"},
		{"slack and dma", lin, hold.RunFlags{Slack: time.Microsecond, SlackSet: true, DMALatency: 9, DMALatencySet: true}, "slack 1µs, cpu_dma_latency 9 µs"},
		{"dma too low", lin, hold.RunFlags{DMALatency: -5, DMALatencySet: true}, "--dma-latency -5: allowed 0..2000000000 µs"},
		{"other OS", &timerinfo.Report{OS: "darwin"}, hold.RunFlags{}, "tickscope run: darwin has no timer setting tickscope can apply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := hold.RunSetting(tt.q, tt.f)
			got := req.String()
			if err != nil {
				got = err.Error()
				if !isUsage(err) {
					t.Errorf("%v is not a usage error", err)
				}
			}
			if got != tt.want {
				t.Errorf("RunSetting = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRunExitStatus(t *testing.T) {
	h := simtest.NewWindows(t, "knee-26100")
	q := simtest.Query(t, h)
	err := hold.Run(context.Background(), h, &sim.System{}, q, timerinfo.Setting{Resolution100ns: 10000}, []string{"no-such-program-here"}, hold.RunOptions{
		Started: func(hold.RunStart) { t.Error("held a setting for a program that is not there") },
	})
	var status *hold.ExitStatus
	if !errors.As(err, &status) || status.Code != hold.ExitNotFound {
		t.Errorf("a program that is not there: %v, want exit %d", err, hold.ExitNotFound)
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to run")
	}
	tests := []struct {
		script string
		want   int
	}{
		{"exit 0", 0},
		{"exit 3", 3},
		{"kill -9 $$", 137},
	}
	sys := &sim.System{}
	for _, tt := range tests {
		var start hold.RunStart
		err := hold.Run(context.Background(), h, sys, q, timerinfo.Setting{Resolution100ns: 10000}, []string{"sh", "-c", tt.script}, hold.RunOptions{
			Started: func(s hold.RunStart) { start = s },
		})
		code := 0
		if errors.As(err, &status) {
			code = status.Code
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tt.want {
			t.Errorf("sh -c %q: exit %d, want %d", tt.script, code, tt.want)
		}
		if start.Program != "sh" || start.Windows == nil || start.Granted.Resolution100ns != sim.Quantise(10000) {
			t.Errorf("started %+v", start)
		}
	}
	if h.Observe().Current100ns != 156250 {
		t.Error("run did not release its request")
	}
	// Every program was started tied to tickscope, and untied once it had
	// exited.
	if sys.Tied != len(tests) || sys.Untied != len(tests) {
		t.Errorf("tied %d, untied %d; want %d each", sys.Tied, sys.Untied, len(tests))
	}
}
