// The model of Windows timers is a deterministic, seeded model of the Windows 10 2004+
// and Windows 11 timer as measured from one process, built from published
// measurements (valleyofdoom/PC-Tuning's docs/research.md for the grants and
// Sleep(1) figures, amitxv/TimerResolution#22 for alternating neighbours,
// Microsoft's timeBeginPeriod page for per-process requests). It implements seam.Host on a
// virtual clock, so the measurement loop, the statistics and the commands
// run against a machine whose truth is known. It is a model: everything
// computed on it is reported as SIMULATED, never as a measurement.
//
// What it models:
//   - granted periods quantised to whole steps of the 3.579545 MHz ACPI PM
//     timer, rounded to 100 ns (Quantise). This is an inference, and only a
//     partial fit: it gives 0.5070 -> 0.5068 ms as published, but 0.5000 ->
//     0.4998 and 1.0000 -> 0.9998 where 0.4992 and 0.9996 were published.
//     Only the published-pairs scenario's table of grants (which takes
//     precedence over Quantise) reproduces all three;
//   - the timer interrupt firing every granted period, and Sleep(n) ending on
//     the first tick at or after its due time, so a call made just after a
//     tick wakes after k ticks, k the smallest with k × period ≥ n ms + the
//     few µs between the tick and the call (which places the knee: a
//     request is fast when 2 × its grant ≥ 1 ms + that delay);
//   - per-process requests (a process without one waits on the 15.625 ms
//     tick) and the global model, and another process holding a finer
//     request, which NtSetTimerResolution then reports as granted, for the
//     whole run or for a while in the middle of it;
//   - a narrow honoured band above which requests fall back to another
//     period; 1 µs neighbours alternating between clean and noisy;
//   - the OS dropping this process's request a while after it was made
//     (Windows 11 ignoring a hidden process's request; the period users
//     report changing on its own after long uptimes);
//   - interference: an extra tick now and then, a rare multi-millisecond
//     preemption, and a slow drift of the wake-up delay.

package sim

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"

	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// pmTimerHz is the ACPI PM timer's frequency.
const pmTimerHz = 3_579_545

// Quantise returns the period the model grants for a request (100 ns
// units): a whole number of PM-timer steps, not above the request, rounded
// to the nearest 100 ns.
func Quantise(request100ns uint32) uint32 {
	steps := uint64(request100ns) * pmTimerHz / 10_000_000
	return uint32((steps*10_000_000 + pmTimerHz/2) / pmTimerHz)
}

// Host is a simulated Windows machine seen from the measuring process.
type Host struct {
	sc  Scenario
	rng *rand.Rand

	now int64 // virtual ns
	// tickOrigin is when the interrupt last changed period: ticks fall at
	// tickOrigin + k × period.
	tickOrigin int64
	own        uint32 // this process's granted request (100 ns), 0 for none
	sleptNs    int64  // virtual time spent inside waits
	// suspendedNs is how long the machine has been suspended so far.
	suspendedNs int64
	// kernel, when set, logs each Sleep as a kernel session would and
	// may delay its wake-up by the interference it models (kernel.go);
	// nil for every command but explain --simulate.
	kernel *Kernel
}

// NewHost returns a host simulating the named scenario, seeded.
func NewHost(name string, seed uint64) (*Host, error) {
	sc, ok := Find(name)
	if !ok {
		return nil, fmt.Errorf("unknown scenario %q: the scenarios are %s", name, ScenarioNames())
	}
	return NewHostFor(sc, seed), nil
}

// NewHostFor returns a host simulating a scenario, seeded: the random stream
// depends on the scenario's name and the seed only, so a scenario and its
// Undisturbed variant start alike.
func NewHostFor(sc Scenario, seed uint64) *Host {
	h := fnv.New64a()
	h.Write([]byte(sc.Name))
	return &Host{sc: sc, rng: rand.New(rand.NewPCG(seed, h.Sum64()))}
}

// Scenario returns the scenario the host simulates.
func (h *Host) Scenario() Scenario { return h.sc }

// SleptNs is the virtual time spent waiting so far: what a real run would
// have spent sleeping.
func (h *Host) SleptNs() int64 { return h.sleptNs }

// Now reads the virtual clock.
func (h *Host) Now() int64 { return h.now }

// Methods lists the one wait the model knows: kernel32 Sleep.
func (h *Host) Methods() []seam.Method {
	return []seam.Method{{Name: "sleep", Summary: "kernel32 Sleep of whole milliseconds (simulated)", WholeMilliseconds: true, Schedule: seam.Relative}}
}

// PrepareThread says what a real run would have done.
func (h *Host) PrepareThread() (string, func()) { return "simulated", func() {} }

// grant is what the kernel grants this process for a request.
func (h *Host) grant(request uint32) uint32 {
	if g, ok := h.sc.Grants[request]; ok {
		return g
	}
	return Quantise(request)
}

// other is the finest request another process holds now, 0 for none.
func (h *Host) other() uint32 {
	other := h.sc.OtherHeld
	if p := h.sc.InterruptPeriod; p != 0 && h.now >= h.sc.InterruptFromNs && h.now < h.sc.InterruptUntilNs && (other == 0 || p < other) {
		other = p
	}
	return other
}

// current is the interrupt period in force for the whole machine.
func (h *Host) current() uint32 {
	current := h.sc.Coarsest
	for _, p := range []uint32{h.ownRequest(), h.other()} {
		if p != 0 && p < current {
			current = p
		}
	}
	return current
}

// effectivePeriod is the tick this process's waits end on (100 ns).
func (h *Host) effectivePeriod() uint32 {
	own := h.ownRequest()
	if own != 0 && h.sc.HonouredHi != 0 && own > h.sc.HonouredHi && own <= h.sc.FallbackHi {
		own = h.sc.FallbackTo
	}
	if own == 0 && !h.sc.Global {
		// Per-process: a process that asked for nothing keeps the default
		// tick even while the interrupt runs faster for someone else.
		return h.sc.Coarsest
	}
	period := h.sc.Coarsest
	for _, p := range []uint32{own, h.other()} {
		if p != 0 && p < period {
			period = p
		}
	}
	return period
}

// Apply requests a period, as NtSetTimerResolution does: the answer is the
// period now in force, which is finer than the grant when another process
// holds a finer request.
func (h *Host) Apply(s timerinfo.Setting) (timerinfo.Setting, func() error, error) {
	noop := func() error { return nil }
	if s.SlackNs != 0 {
		return timerinfo.Setting{}, noop, fmt.Errorf("timer slack: %w", seam.ErrUnsupported)
	}
	if s.Resolution100ns == 0 {
		return timerinfo.Setting{}, noop, nil
	}
	if s.Resolution100ns < h.sc.Finest || s.Resolution100ns > h.sc.Coarsest {
		return timerinfo.Setting{}, noop, &seam.OSError{Call: "NtSetTimerResolution (simulated)", Err: fmt.Errorf("STATUS_INVALID_PARAMETER")}
	}
	h.setOwn(h.grant(s.Resolution100ns))
	release := func() error { h.setOwn(0); return nil }
	return timerinfo.Setting{Resolution100ns: h.current(), Simulated: true}, release, nil
}

func (h *Host) setOwn(period uint32) {
	h.own = period
	h.tickOrigin = h.now
}

// ownRequest is this process's request in force: the grant, until the
// scenario's OS drops it DropRequestAfterNs after it was made (virtual
// time), from when the interrupt runs at the period without it.
func (h *Host) ownRequest() uint32 {
	if after := h.sc.DropRequestAfterNs; after > 0 && h.own != 0 && h.now-h.tickOrigin >= after {
		h.own = 0
		h.tickOrigin += after
	}
	return h.own
}

// Advance lets virtual time pass without a wait, as it does while a
// holder idles between its checks.
func (h *Host) Advance(d time.Duration) { h.now += int64(d) }

// Observe reports the period in force.
func (h *Host) Observe() seam.Observation {
	return seam.Observation{Current100ns: h.current()}
}

// Query reports the simulated machine.
func (h *Host) Query() (*timerinfo.Report, error) {
	var key *uint32
	if h.sc.Global {
		one := uint32(1)
		key = &one
	}
	win := &timerinfo.Windows{
		Coarsest100ns:                 h.sc.Coarsest,
		Finest100ns:                   h.sc.Finest,
		Current100ns:                  h.current(),
		ProcessHoldsRequest:           h.ownRequest() != 0,
		Version:                       fmt.Sprintf("10.0.%d", h.sc.Build),
		Build:                         h.sc.Build,
		Product:                       timerinfo.WindowsProduct(10, 0, h.sc.Build, false),
		GlobalTimerResolutionRequests: key,
		DynamicTickDisabled:           "unknown (simulated)",
		PlatformTick:                  "unknown (simulated)",
		PlatformClock:                 "unknown (simulated)",
		QPCFrequencyHz:                10_000_000,
	}
	win.RequestModel = timerinfo.RequestModelFor(win.Build, key)
	rep := &timerinfo.Report{OS: "windows", Arch: "simulated", CPUs: 8, Windows: win, Warnings: []string{}}
	if h.current() < h.sc.Coarsest && h.ownRequest() == 0 {
		rep.Warnings = append(rep.Warnings, timerinfo.HeldWarning(h.current(), h.sc.Coarsest))
	}
	return rep, nil
}

// NewWaiter returns the simulated Sleep.
func (h *Host) NewWaiter(method string, delay time.Duration) (seam.Waiter, error) {
	if method != "sleep" {
		return nil, fmt.Errorf("unknown method %q: the model simulates sleep only", method)
	}
	return &sleepWaiter{h: h, delayNs: int64(delay / time.Millisecond * time.Millisecond)}, nil
}

type sleepWaiter struct {
	h       *Host
	delayNs int64
}

func (w *sleepWaiter) Wait(int64) error { w.h.sleep(w.delayNs); return nil }
func (w *sleepWaiter) Close() error     { return nil }

// sleep advances the clock through one Sleep of delayNs called now.
func (h *Host) sleep(delayNs int64) {
	sc := &h.sc
	period := int64(h.effectivePeriod()) * 100
	due := h.now + delayNs
	// The first tick at or after the due time.
	ticks := (due - h.tickOrigin + period - 1) / period
	wake := h.tickOrigin + ticks*period
	extra := sc.ExtraTickProb
	if sc.AltHi != 0 && h.own >= sc.AltLo && h.own <= sc.AltHi && (h.own/10)%2 == 1 {
		extra = sc.AltBadExtraTickProb
	}
	if h.rng.Float64() < extra {
		wake += period
	}
	tick := wake
	var preempt, suspend int64
	if sc.PreemptProb > 0 && h.rng.Float64() < sc.PreemptProb {
		preempt = int64(time.Millisecond) + h.rng.Int64N(max(sc.PreemptMaxNs-int64(time.Millisecond), 1))
		wake += preempt
	}
	if sc.SuspendForNs > 0 && h.suspendedNs == 0 && wake >= sc.SuspendAtNs {
		suspend = sc.SuspendForNs
		wake += sc.SuspendForNs
		h.suspendedNs += sc.SuspendForNs
	}
	if h.kernel != nil {
		wake = h.kernel.sleep(sleepParts{start: h.now, due: due, period: period, tick: tick, preempt: preempt, suspend: suspend})
	}
	// The thread runs, and makes its next call, a few µs after the tick.
	wake += h.callDelay(wake)
	h.sleptNs += wake - h.now
	h.now = wake
}

// callDelay is the time from a tick to the woken thread's next call: the
// scenario's base, its slow drift, and Gaussian jitter, never under 0.5 µs.
func (h *Host) callDelay(at int64) int64 {
	sc := &h.sc
	d := float64(sc.CallDelayNs) + h.rng.NormFloat64()*float64(sc.CallJitterNs)
	if sc.DriftNs != 0 && sc.DriftPeriodNs != 0 {
		d += float64(sc.DriftNs) * math.Sin(2*math.Pi*float64(at)/float64(sc.DriftPeriodNs))
	}
	return int64(max(d, 500))
}

// CPUTime is zero: the model spends no CPU.
func (h *Host) CPUTime() time.Duration { return 0 }

var _ seam.InterruptClock = (*Host)(nil)

// modelReadNs is how long one read of the interrupt time takes on the
// model: a read of shared memory, some 20 ns.
const modelReadNs = 20

// PollInterruptTime is the model's interrupt time read in a loop for d: it
// steps by the period in force (current) at each interrupt, the way
// Windows' does, and the model's clock moves on by d.
func (h *Host) PollInterruptTime(d time.Duration) (string, int, []uint64, error) {
	period := int64(h.current()) * 100 // ns
	var values []uint64
	for t := h.now - h.now%period; t < h.now+int64(d); t += period {
		values = append(values, uint64(max(t, 0)/100))
	}
	h.now += int64(d)
	return fmt.Sprintf("simulated (model %s): the interrupt time read in a loop for %v", h.sc.Name, d), int(int64(d) / modelReadNs), values, nil
}

var _ seam.StopWatcher = (*Host)(nil)

// WatchStops makes the model a seam.StopWatcher of its scenario's suspend
// (SuspendAtNs), which it tells as the growth of the interrupt time's bias
// does on Windows. The model has no job control.
func (h *Host) WatchStops() (seam.StopWatch, error) { return modelWatch{h}, nil }

type modelWatch struct{ h *Host }

func (w modelWatch) Suspended() int64 { return w.h.suspendedNs }
func (modelWatch) Continued() []int64 { return nil }
func (modelWatch) Close()             {}
