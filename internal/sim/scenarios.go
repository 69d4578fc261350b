package sim

import (
	"strings"
	"time"
)

// Scenario is one simulated machine. Periods are in 100 ns units.
type Scenario struct {
	Name    string
	Summary string
	Build   uint32
	// Coarsest and Finest are what NtQueryTimerResolution reports.
	Coarsest, Finest uint32
	// Global is the GlobalTimerResolutionRequests=1 model: the finest
	// request anywhere applies to this process's waits too.
	Global bool
	// OtherHeld is another process's request, 0 for none.
	OtherHeld uint32
	// InterruptPeriod is another process's request made InterruptFromNs
	// into the run (virtual time) and released at InterruptUntilNs: a game
	// or a browser raising the timer in the middle of a bench.
	InterruptPeriod                   uint32
	InterruptFromNs, InterruptUntilNs int64
	// Grants are published request → grant pairs that override Quantise.
	Grants map[uint32]uint32
	// CallDelayNs and CallJitterNs: the few µs from a tick to the woken
	// thread's next call (mean and standard deviation).
	CallDelayNs, CallJitterNs int64
	// HonouredHi and FallbackHi: when HonouredHi is set, a granted period
	// in (HonouredHi, FallbackHi] is not honoured and waits run on
	// FallbackTo instead (TickTune's "narrow honoured band").
	HonouredHi, FallbackHi, FallbackTo uint32
	// ExtraTickProb is the chance that a wait ends one tick late.
	ExtraTickProb float64
	// AltLo..AltHi: there every other 1 µs step of the granted period (odd
	// µs) has AltBadExtraTickProb instead (amitxv/TimerResolution#22). The
	// grant, not the request, decides: the kernel sees only the grant.
	AltLo, AltHi        uint32
	AltBadExtraTickProb float64
	// PreemptProb is the chance of a preemption of 1 ms to PreemptMaxNs.
	PreemptProb  float64
	PreemptMaxNs int64
	// DriftNs is the amplitude of a slow sinusoidal drift of the call delay
	// (heat, power state) with period DriftPeriodNs.
	DriftNs, DriftPeriodNs int64
	// DropRequestAfterNs: the OS drops this process's request this long
	// after it was made (0: never).
	DropRequestAfterNs int64
	// Programs are processes that start and exit during the run (apply
	// --while watches for them).
	Programs []ProgramRun
	// SuspendAtNs and SuspendForNs: the machine is suspended (sleep)
	// SuspendAtNs into the run (virtual time) for SuspendForNs, once, 0
	// for never. The wait in progress ends after the resume, late by the
	// time asleep, and the interrupt time's bias grows by it: the host,
	// a seam.StopWatcher, tells it as Windows' interrupt times do.
	SuspendAtNs, SuspendForNs int64
}

// ProgramRun is a process of the model's machine, running from FromNs to
// UntilNs (virtual time).
type ProgramRun struct {
	PID int
	// Name is its image name, Path its executable's.
	Name, Path      string
	FromNs, UntilNs int64
}

const (
	us = int64(time.Microsecond)
	ms = int64(time.Millisecond)
)

// scenarios are the published shapes the model reproduces.
var scenarios = []Scenario{
	{
		Name:    "published-pairs",
		Summary: "the published grants: 1.000 -> 0.9996 ms (Sleep(1) ~2.0 ms), 0.507 -> 0.5068 (~1.01), 0.500 -> 0.4992 (~1.50)",
		Build:   19045, Coarsest: 156250, Finest: 5000,
		Grants:      map[uint32]uint32{10000: 9996, 5070: 5068, 5000: 4992},
		CallDelayNs: 4 * us, CallJitterNs: us / 2, ExtraTickProb: 0.002,
	},
	{
		// Quantised, 5021-5022 are granted 5020 (2 ticks = 1.0040 ms) and
		// 5023-5025 are granted 5023 (1.0046 ms): with the tick-to-call
		// delay at 4.3 µs and a jitter of 0.05 µs both sides of TickTune's
		// knee at 5023 are six standard deviations clear of it.
		Name:    "knee-26100",
		Summary: "Windows 11 24H2: requests from 5023 (0.5023 ms) up sleep two ticks (~1.01 ms), below it three (~1.50)",
		Build:   26100, Coarsest: 156250, Finest: 5000,
		CallDelayNs: 43 * us / 10, CallJitterNs: 5 * us / 100, ExtraTickProb: 0.002,
	},
	{
		// Quantised, 5016-5017 are granted 5015 (2 ticks = 1.0030 ms) and
		// 5018-5019 are granted 5017 (1.0034 ms): with the tick-to-call
		// delay at 3.2 µs and a jitter of 0.06 µs both sides of TickTune's
		// knee at 5018 are over three standard deviations clear of it.
		// (At a delay of 3.4 µs, request 5018 would sit exactly on the
		// knee and wake fast about half the time.)
		Name:    "knee-26200",
		Summary: "Windows 11 25H2: the knee at 5018 and a fast window under 1 us wide (5018-5027); above it requests fall back to 0.5 ms",
		Build:   26200, Coarsest: 156250, Finest: 5000,
		CallDelayNs: 32 * us / 10, CallJitterNs: 6 * us / 100, ExtraTickProb: 0.002,
		HonouredHi: 5027, FallbackHi: 9000, FallbackTo: 5000,
	},
	{
		// Quantised, 5105-5106 are granted 5104 (2 ticks = 1.0208 ms) and
		// 5107-5109 are granted 5107 (1.0214 ms): with the tick-to-call
		// delay at 21.1 µs and a jitter of 0.1 µs both sides of the knee are
		// three standard deviations clear of it. TickTune's band starts at
		// 5106, which quantisation cannot separate from 5105: the model's
		// starts at 5107.
		Name:    "narrow-band",
		Summary: "TickTune's example, quantised: slow to 0.5106 ms, a fast band 0.5107-0.5132 ms, and requests above it falling back to the slow 0.5 ms tick",
		Build:   22631, Coarsest: 156250, Finest: 5000,
		CallDelayNs: 211 * us / 10, CallJitterNs: us / 10, ExtraTickProb: 0.003,
		HonouredHi: 5132, FallbackHi: 10000, FallbackTo: 5000,
	},
	{
		Name:    "alternating",
		Summary: "1 us neighbours alternate: between 0.506 and 0.510 ms every odd microsecond takes an extra tick one wait in seven",
		Build:   22631, Coarsest: 156250, Finest: 5000,
		CallDelayNs: 4 * us, CallJitterNs: us / 2, ExtraTickProb: 0.002,
		AltLo: 5060, AltHi: 5109, AltBadExtraTickProb: 0.15,
	},
	{
		Name:    "noisy-laptop",
		Summary: "a busy laptop: jittery wake-ups, 2 % extra ticks, rare preemptions of up to 8 ms, and a drift of +-3 us over a minute",
		Build:   26100, Coarsest: 156250, Finest: 5000,
		CallDelayNs: 5 * us, CallJitterNs: 2 * us, ExtraTickProb: 0.02,
		PreemptProb: 0.002, PreemptMaxNs: 8 * ms,
		DriftNs: 3 * us, DriftPeriodNs: 60_000 * ms,
	},
	{
		Name:    "contaminated",
		Summary: "another process holds 0.5 ms: every coarser request is granted 0.5 ms and measures the same",
		Build:   26100, Coarsest: 156250, Finest: 5000, OtherHeld: 5000,
		CallDelayNs: 46 * us / 10, CallJitterNs: us / 5, ExtraTickProb: 0.002,
	},
	{
		Name:    "interrupted",
		Summary: "knee-26100's machine, with another process raising the timer to 0.5 ms 4 s into the run and releasing it 3 s later (a game started and closed mid-bench)",
		Build:   26100, Coarsest: 156250, Finest: 5000,
		CallDelayNs: 43 * us / 10, CallJitterNs: 5 * us / 100, ExtraTickProb: 0.002,
		InterruptPeriod: 5000, InterruptFromNs: 4_000 * ms, InterruptUntilNs: 7_000 * ms,
	},
	{
		Name:    "dropped-request",
		Summary: "knee-26100's machine, whose OS drops this process's request 60 s after it was made (Windows 11 ignoring a hidden holder; the period reported changing on its own after long uptimes)",
		Build:   26100, Coarsest: 156250, Finest: 5000,
		CallDelayNs: 43 * us / 10, CallJitterNs: 5 * us / 100, ExtraTickProb: 0.002,
		DropRequestAfterNs: 60_000 * ms,
	},
	{
		Name:    "game-session",
		Summary: "knee-26100's machine with requests global: game.exe runs from 1.5 s to 4 s, a second game.exe from 3 s to 5 s, and launcher.exe throughout (apply --while game.exe)",
		Build:   26100, Coarsest: 156250, Finest: 5000, Global: true,
		CallDelayNs: 43 * us / 10, CallJitterNs: 5 * us / 100, ExtraTickProb: 0.002,
		Programs: []ProgramRun{
			{PID: 4100, Name: "launcher.exe", Path: `C:\Games\launcher.exe`, FromNs: 0, UntilNs: 1 << 62},
			{PID: 4242, Name: "game.exe", Path: `C:\Games\game.exe`, FromNs: 1_500 * ms, UntilNs: 4_000 * ms},
			{PID: 4318, Name: "game.exe", Path: `C:\Games\game.exe`, FromNs: 3_000 * ms, UntilNs: 5_000 * ms},
		},
	},
	{
		Name:    "suspended",
		Summary: "knee-26100's machine, suspended (sleep) for 3 s 1 s into the run: the wait in progress ends 3 s late, and the host tells the suspend",
		Build:   26100, Coarsest: 156250, Finest: 5000,
		CallDelayNs: 43 * us / 10, CallJitterNs: 5 * us / 100, ExtraTickProb: 0.002,
		SuspendAtNs: 1_000 * ms, SuspendForNs: 3_000 * ms,
	},
	{
		Name:    "global-key",
		Summary: "GlobalTimerResolutionRequests=1 on Windows 11 with another process holding 1 ms: this process's waits follow it even without a request",
		Build:   26100, Coarsest: 156250, Finest: 5000, Global: true, OtherHeld: 10000,
		CallDelayNs: 46 * us / 10, CallJitterNs: us / 5, ExtraTickProb: 0.002,
	},
}

// Scenarios lists the scenarios.
func Scenarios() []Scenario { return scenarios }

// Find returns the named scenario.
func Find(name string) (Scenario, bool) {
	for _, s := range scenarios {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}

// Undisturbed is the scenario without its interruption: the same machine
// with nothing raising the timer mid-run.
func (s Scenario) Undisturbed() Scenario {
	s.InterruptPeriod, s.InterruptFromNs, s.InterruptUntilNs = 0, 0, 0
	return s
}

// ScenarioNames lists the scenario names, comma-separated.
func ScenarioNames() string { return strings.Join(ScenarioNameList(), ", ") }

// ScenarioNameList is the scenario names, in order: what a raw file of the
// model may name (rawfile.Limits).
func ScenarioNameList() []string {
	names := make([]string, len(scenarios))
	for i, s := range scenarios {
		names[i] = s.Name
	}
	return names
}
