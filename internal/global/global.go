// Package global decides and does what the global commands do: global
// on|off (GlobalTimerResolutionRequests, the registry value that makes a
// process's timer request reach every process) and verify-global (whether
// a request held here speeds up another process), and renders their
// results.
package global

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"strconv"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/stats"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// GlobalCheck is what verify-global prints as JSON.
type GlobalCheck struct {
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
	// Sleep(1) p50 of the child with nothing held and with the request held
	// here (0 when not measured).
	BaselineP50Ns int64  `json:"baseline_p50_ns"`
	HeldP50Ns     int64  `json:"held_p50_ns"`
	Held100ns     uint32 `json:"held_100ns"`
	RequestModel  string `json:"request_model,omitempty"`
}

// VerdictNotApplicable is verify-global's answer where there is no timer
// period to request.
const VerdictNotApplicable = "not applicable"

// LinuxGlobalText is what verify-global says on Linux.
const LinuxGlobalText = `Linux has no global timer-period request: there is no tick to ask for.
  - timer slack is each thread's own and is inherited by the threads and
    programs it starts: tickscope run --slack 1us -- CMD
  - /dev/cpu_dma_latency is the one system-wide request: while it is held,
    every CPU stays out of idle states slower to leave than the value:
    tickscope apply --dma-latency 0 (root)
  - whether high-resolution timers are active: tickscope query shows it.`

// The parts of the OS each of global's actions uses (seam.System, which
// package platform implements and package sim fakes, has them all).
type (
	// Checker is what verify-global needs besides the host: the lock
	// that keeps another tickscope's requests out of the measurement, and
	// the opt-out of Windows 11's throttling of hidden processes'
	// requests.
	Checker interface {
		seam.Locker
		seam.Throttling
	}
	// Key reads and writes GlobalTimerResolutionRequests, and tells
	// whether tickscope runs elevated, which writing it takes.
	Key interface {
		Elevated() bool
		seam.GlobalKey
	}
	// Self finds this tickscope's executable, to run it as the child.
	Self interface {
		seam.Self
	}
)

// ChildSleepP50 measures, in another process, the p50 of Sleep(1) with no
// request of that process's own.
type ChildSleepP50 func(ctx context.Context) (int64, error)

// VerifyGlobal measures whether a request held here speeds up another
// process: the child's Sleep(1) with nothing held, then while this process
// holds the finest period. It needs the timer at rest; otherwise the
// verdict is inconclusive and nothing is measured.
func VerifyGlobal(ctx context.Context, host seam.Host, sys Checker, child ChildSleepP50) (*GlobalCheck, error) {
	q, err := host.Query()
	if err != nil {
		return nil, err
	}
	switch {
	case q.Linux != nil:
		return &GlobalCheck{Verdict: VerdictNotApplicable, Reason: LinuxGlobalText}, nil
	case q.Windows == nil:
		return &GlobalCheck{Verdict: VerdictNotApplicable, Reason: fmt.Sprintf("%s has no timer request tickscope can check.", q.OS)}, nil
	}
	// Another tickscope holding requests (bench) would be measured too.
	release, err := sys.Lock(seam.BenchLock)
	if err != nil {
		return nil, err
	}
	defer release()
	win := q.Windows
	res := &GlobalCheck{Held100ns: win.Finest100ns, RequestModel: win.RequestModel}
	if win.Current100ns < win.Coarsest100ns {
		res.Verdict = timerinfo.VerdictInconclusive
		res.Reason = fmt.Sprintf("something already holds the timer at %s ms (the coarsest is %s ms): close it and run again", timerinfo.FormatPeriodMS(win.Current100ns), timerinfo.FormatPeriodMS(win.Coarsest100ns))
		return res, nil
	}
	if res.BaselineP50Ns, err = child(ctx); err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// A hidden holder's request may be throttled on Windows 11; where there
	// is no throttling, there is nothing to opt out of.
	sys.IgnoreTimerThrottling()
	granted, withdraw, err := host.Apply(timerinfo.Setting{Resolution100ns: win.Finest100ns})
	if err != nil {
		return nil, err
	}
	res.Held100ns = granted.Resolution100ns
	res.HeldP50Ns, err = child(ctx)
	_ = withdraw() // verify-global reports the verdict, not the release
	if err != nil {
		return nil, err
	}
	res.Verdict, res.Reason = timerinfo.GlobalVerdict(res.BaselineP50Ns, res.HeldP50Ns, res.Held100ns)
	return res, nil
}

// GlobalResult is what global prints as JSON.
type GlobalResult struct {
	Key    string  `json:"key"`
	Before *uint32 `json:"before"`
	After  *uint32 `json:"after"`
	// Changed is false when the value already was what was asked.
	Changed bool `json:"changed"`
	// BuildHonoursKey is false on builds that ignore the value.
	BuildHonoursKey bool   `json:"build_honours_key"`
	RequestModel    string `json:"request_model_after_reboot"`
	Undo            string `json:"undo,omitempty"`

	// On is what was asked; Warning says that this build ignores the value.
	On      bool   `json:"-"`
	Warning string `json:"-"`
}

// ErrGlobalNeedsElevation is SetGlobal's refusal to change the value
// without elevation (tickscope ui then offers to run global elevated).
var ErrGlobalNeedsElevation = errors.New("changing " + timerinfo.GlobalRequestsKey + " needs elevation: run from an elevated terminal (nothing was changed)")

// SetGlobal writes (on) or removes GlobalTimerResolutionRequests, and
// nothing else; when the value already is what is asked it changes nothing
// and needs no elevation.
func SetGlobal(q *timerinfo.Report, sys Key, on bool) (*GlobalResult, error) {
	if q.Windows == nil {
		return nil, options.Usagef("tickscope global: GlobalTimerResolutionRequests is a Windows registry value; %s has no global timer request (tickscope verify-global says what it has)", q.OS)
	}
	before := sys.GlobalRequests()
	res := &GlobalResult{Key: timerinfo.GlobalRequestsKey, Before: before, BuildHonoursKey: q.Windows.Build >= timerinfo.Build20348, On: on}
	if isOn(before) != on || (!on && before != nil) {
		if !sys.Elevated() {
			return nil, ErrGlobalNeedsElevation
		}
		if err := sys.SetGlobalRequests(on); err != nil {
			return nil, err
		}
		res.Changed = true
	}
	res.After = sys.GlobalRequests()
	switch {
	case isOn(res.After) != on && res.After == nil:
		return nil, fmt.Errorf("%s is absent after the change", timerinfo.GlobalRequestsKey)
	case isOn(res.After) != on:
		return nil, fmt.Errorf("%s reads %d after the change", timerinfo.GlobalRequestsKey, *res.After)
	}
	res.RequestModel = timerinfo.RequestModelFor(q.Windows.Build, res.After)
	if res.Changed {
		res.Undo = map[bool]string{true: "tickscope global off", false: "tickscope global on"}[on]
	}
	if !res.BuildHonoursKey && on {
		res.Warning = fmt.Sprintf("this build (%s, %s) ignores GlobalTimerResolutionRequests: only Windows 11 and Server 2022 or later read it, so requests stay %s",
			q.Windows.Version, q.Windows.Product, map[bool]string{true: "global (as before Windows 10 2004)", false: "per-process"}[q.Windows.Build < timerinfo.Build19041])
	}
	return res, nil
}

// isOn reads the value as Windows does: 1 makes requests global.
func isOn(v *uint32) bool { return v != nil && *v == 1 }

// ChildMeasure is the real ChildSleepP50: this tickscope (found through
// sys, only when a child is needed) runs
// `measure --method sleep --delay 1ms --json` as a child process, with its
// standard error passed through, and the child's p50 is read back from
// its JSON (report.Measurement's summary).
func ChildMeasure(sys Self, stderr io.Writer) ChildSleepP50 {
	return func(ctx context.Context) (int64, error) {
		exe, err := sys.Executable()
		if err != nil {
			return 0, &seam.OSError{Call: "find this executable", Err: err}
		}
		child := exec.CommandContext(ctx, exe, "measure", "--method", "sleep", "--delay", "1ms", "--samples", strconv.Itoa(childSamples), "--json")
		child.Stderr = stderr
		out, err := child.Output()
		if err != nil {
			return 0, &seam.OSError{Call: "the child measurement (" + exe + " measure)", Err: err}
		}
		var m struct {
			Summary stats.Summary `json:"summary"` // as report.Measurement has it
		}
		if err := json.Unmarshal(out, &m); err != nil || m.Summary.P50 == 0 {
			return 0, fmt.Errorf("the child measurement printed no p50: %v", err)
		}
		return m.Summary.P50, nil
	}
}

// childSamples is how many Sleep(1) waits the child measures: at the
// 15.625 ms default, about 0.6 s.
const childSamples = 40
