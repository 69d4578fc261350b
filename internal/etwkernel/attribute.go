package etwkernel

import (
	"errors"
	"fmt"
	"sort"
	"time"
)

// Wait is one wait as tickscope measured it, in the session's clock (QPC
// ticks): a Sleep(1), or a wait on a waitable timer.
type Wait struct {
	// ThreadID is the measuring thread.
	ThreadID uint32
	// Start is when the wait began; Requested is the wait asked for (1 ms
	// for Sleep(1)): the deadline is Start + Requested.
	Start     int64
	Requested time.Duration
	// Woke is when the wait returned to the measuring code.
	Woke int64
	// HighResolution is a waitable timer made with
	// CREATE_WAITABLE_TIMER_HIGH_RESOLUTION, which the kernel programs for
	// its own due time: the tick model does not round it.
	HighResolution bool
}

// TickModel is when the clock ticks: a Sleep (and a waitable timer that
// is not high-resolution) expires at the first tick at or after its
// deadline, so that a wait may end up to one period after it and not be
// late.
type TickModel struct {
	// Period is the timer period in force during the wait.
	Period time.Duration
	// Ticks are the ticks' expected times (QPC), ascending. Nil: the
	// phase is unknown (explain's session does not learn it), and the
	// model allows the most the period allows, a whole period.
	Ticks []int64
}

// Input is one late wait and what the session saw around it.
type Input struct {
	Wait  Wait
	Ticks TickModel
	// Freq is the QPC frequency, counts a second (the session's
	// TRACE_LOGFILE_HEADER.PerfFreq).
	Freq int64
	// ClockAt is when the clock interrupt of the expected tick was
	// entered (QPC), from a source the caller has checked (the model of
	// Windows timers; on Windows, a clock-interrupt event once its layout
	// is checked there); 0 when not observed. Without it, the time from
	// the expected tick to the ready is unexplained: it cannot be split
	// between the clock's delay and the timer expiration.
	ClockAt int64
	// Events are the decoded events of the session around the wait, in
	// any order: ISR and DPC on every processor, CSwitch and ReadyThread.
	// Those before the wait matter too: the last CSwitch on the waking
	// processor before the ready says which thread ran.
	Events []Event
	// Images maps routines to drivers; nil: built from the ImageLoad
	// events among Events.
	Images *Images
}

// Cause is one cause of a wait's excess.
type Cause string

// The causes, in the order they are counted when two are equal.
const (
	// ClockLate: the clock interrupt came after the tick's expected time.
	ClockLate Cause = "clock interrupt late"
	// TimerExpiry: from the clock interrupt to the thread made ready, the
	// kernel's processing of the expired timer (less ISR and DPC time).
	TimerExpiry Cause = "clock interrupt to ready"
	// ISRTime and DPCTime: interrupt service routines and DPCs (normal,
	// timer, threaded) on the processor, by driver (Drivers).
	ISRTime Cause = "ISR"
	DPCTime Cause = "DPC"
	// OtherThreads: ready, the thread waited while others ran on the
	// waking processor (Threads).
	OtherThreads Cause = "other threads ran"
	// IdleExit: ready, the thread waited while the waking processor left
	// a C-state deeper than C0/C1 (PreviousCState > 0).
	IdleExit Cause = "idle exit"
	// RemoteReady: ready on another processor, the thread waited while
	// the waking processor was idle without a deep C-state: the
	// cross-processor wake-up.
	RemoteReady Cause = "readied on another processor"
	// Unexplained is the rest: time no event accounts for.
	Unexplained Cause = "unexplained"
)

// Causes is every cause, in the order Attribute gives them: read it,
// never change it.
var Causes = []Cause{ClockLate, TimerExpiry, ISRTime, DPCTime, OtherThreads, IdleExit, RemoteReady, Unexplained}

// Share is one cause's part of a wait's excess.
type Share struct {
	Cause Cause         `json:"cause"`
	Time  time.Duration `json:"time_ns"`
}

// DriverTime is one driver's ISR and DPC time within a wait's excess.
type DriverTime struct {
	Image string        `json:"image"`
	ISR   time.Duration `json:"isr_ns"`
	DPC   time.Duration `json:"dpc_ns"`
}

// ThreadTime is one thread's time running on the waking processor while
// the measuring thread was ready.
type ThreadTime struct {
	ThreadID uint32 `json:"tid"`
	// Priority is the thread's priority when it was switched in.
	Priority int8          `json:"priority"`
	Time     time.Duration `json:"time_ns"`
}

// Attribution is one wait's lateness, split by the tick model and then by
// cause. Causes always sum to Excess, each one at least 0, and always
// list Unexplained.
type Attribution struct {
	// Lateness is Woke minus the deadline; Allowed is the part of it the
	// tick model allows (up to the expected tick); Excess is the rest,
	// the part that is late.
	Lateness time.Duration `json:"lateness_ns"`
	Allowed  time.Duration `json:"allowed_ns"`
	Excess   time.Duration `json:"excess_ns"`
	// PhaseKnown says that Allowed comes from tick times; without them it
	// is the most one period allows.
	PhaseKnown bool `json:"phase_known"`
	// Causes are by cause, largest first.
	Causes  []Share      `json:"causes"`
	Drivers []DriverTime `json:"drivers,omitempty"`
	Threads []ThreadTime `json:"threads,omitempty"`
	// ReadyDelay is from the ReadyThread of the measuring thread to the
	// CSwitch to it, when both were seen.
	ReadyDelay time.Duration `json:"ready_delay_ns"`
	// ReadyCPU is the processor that readied the thread and WakeCPU the
	// one it was switched in on; -1 when not seen.
	ReadyCPU int `json:"ready_cpu"`
	WakeCPU  int `json:"wake_cpu"`
	// CState is PreviousCState of the switch in from the idle thread; -1
	// when the thread was not switched in from idle.
	CState int `json:"cstate"`
	// Notes say what the events did not show.
	Notes []string `json:"notes,omitempty"`
}

// ErrInput is an Input that cannot be attributed.
var ErrInput = errors.New("a wait that cannot be attributed")

// MaxWindowEvents bounds the ISR, DPC and CSwitch events inside one
// wait's excess: more means a session whose events cannot be one wait's.
const MaxWindowEvents = 4096

// interval is one ISR or DPC execution on a processor.
type interval struct {
	from, to int64
	cpu      int
	isr      bool
	image    string
}

type leafKey struct {
	cause    Cause
	image    string // ISRTime, DPCTime
	tid      uint32 // OtherThreads
	priority int8
}

// Attribute splits one wait's lateness: first the tick model, then the
// excess over it by cause, from the events on the processors that handled
// the tick and woke the thread. See the package doc for the rules.
func Attribute(in Input) (Attribution, error) {
	w := in.Wait
	a := Attribution{ReadyCPU: -1, WakeCPU: -1, CState: -1}
	if in.Freq <= 0 {
		return a, fmt.Errorf("QPC frequency %d: %w", in.Freq, ErrInput)
	}
	if w.Woke < w.Start {
		return a, fmt.Errorf("woke at %d before starting at %d: %w", w.Woke, w.Start, ErrInput)
	}
	req, err := toTicks(w.Requested, in.Freq)
	if err != nil || w.Start > 1<<62 || req > 1<<62 {
		return a, fmt.Errorf("requested %v: %w", w.Requested, ErrInput)
	}
	due := w.Start + req
	if w.Woke <= due {
		a.Causes = []Share{{Unexplained, 0}}
		a.Notes = append(a.Notes, "woke at or before its deadline: not late")
		return a, nil
	}

	// The tick model: the tick the wait should have ended on.
	expected := due
	switch {
	case w.HighResolution:
		a.PhaseKnown = true
	case in.Ticks.Period <= 0:
		return a, fmt.Errorf("timer period %v: %w", in.Ticks.Period, ErrInput)
	case len(in.Ticks.Ticks) > 0:
		a.PhaseKnown = true
		ticks := in.Ticks.Ticks
		i := sort.Search(len(ticks), func(i int) bool { return ticks[i] >= due })
		if i == len(ticks) {
			return a, fmt.Errorf("the tick times end at %d, before the deadline %d: %w", ticks[len(ticks)-1], due, ErrInput)
		}
		expected = ticks[i]
		if p, err := toTicks(in.Ticks.Period, in.Freq); err == nil && expected-due > p {
			a.Notes = append(a.Notes, "the tick times leave more than a period after the deadline")
		}
	default:
		p, err := toTicks(in.Ticks.Period, in.Freq)
		if err != nil {
			return a, fmt.Errorf("timer period %v: %w", in.Ticks.Period, ErrInput)
		}
		expected = due + min(p, w.Woke-due)
		a.Notes = append(a.Notes, "tick phase unknown: a whole period allowed")
	}
	ns := func(x int64) time.Duration { return toDuration(x-due, in.Freq) }
	a.Lateness = ns(w.Woke)
	if w.Woke <= expected {
		a.Allowed = a.Lateness
		a.Causes = []Share{{Unexplained, 0}}
		if w.Woke < expected {
			a.Notes = append(a.Notes, "woke before the modelled tick: the tick model does not fit this wait")
		}
		return a, nil
	}
	a.Allowed = ns(expected)
	a.Excess = a.Lateness - a.Allowed

	images := in.Images
	if images == nil {
		images = &Images{}
		for _, ev := range in.Events {
			if im, ok := ev.(*ImageLoad); ok {
				images.Add(im)
			}
		}
	}

	// The switch in that returned the wait, and the ready before it.
	var sw *CSwitch
	var ready *ReadyThread
	for _, ev := range in.Events {
		if c, ok := ev.(*CSwitch); ok && c.NewThreadID == w.ThreadID && c.At >= w.Start && c.At <= w.Woke && (sw == nil || c.At > sw.At) {
			sw = c
		}
	}
	limit := w.Woke
	if sw != nil {
		limit = sw.At
	}
	for _, ev := range in.Events {
		if r, ok := ev.(*ReadyThread); ok && r.TThreadID == w.ThreadID && r.At >= w.Start && r.At <= limit && (ready == nil || r.At > ready.At) {
			ready = r
		}
	}
	tickCPU, wakeCPU := -1, -1
	if ready != nil {
		a.ReadyCPU = int(ready.CPU)
		tickCPU, wakeCPU = a.ReadyCPU, a.ReadyCPU
	} else {
		a.Notes = append(a.Notes, "no ReadyThread of the thread seen")
	}
	if sw != nil {
		a.WakeCPU = int(sw.CPU)
		wakeCPU = a.WakeCPU
		if tickCPU < 0 {
			tickCPU = wakeCPU
		}
		if sw.OldThreadID == 0 {
			a.CState = int(sw.PreviousCState)
		}
	} else {
		a.Notes = append(a.Notes, "no CSwitch to the thread seen")
	}
	if ready != nil && sw != nil {
		a.ReadyDelay = toDuration(sw.At-ready.At, in.Freq)
	}
	remote := ready != nil && sw != nil && ready.CPU != sw.CPU

	// The points of the excess, in order: E ≤ clock ≤ ready ≤ switch ≤ W.
	clamp := func(x, lo int64) int64 { return min(max(x, lo), w.Woke) }
	E := expected
	clock, haveClock := E, in.ClockAt != 0
	if haveClock {
		clock = clamp(in.ClockAt, E)
	} else {
		a.Notes = append(a.Notes, "clock interrupt not observed")
	}
	readyAt, switchAt := clock, clock
	if ready != nil {
		readyAt = clamp(ready.At, clock)
		switchAt = readyAt
	}
	if sw != nil {
		switchAt = clamp(sw.At, readyAt)
	}

	// ISR and DPC executions inside the excess, and the CSwitch timeline
	// of the waking processor.
	var ivs []interval
	var switches []*CSwitch
	for _, ev := range in.Events {
		var from, to int64
		var isr bool
		var routine uint64
		var cpu uint16
		switch e := ev.(type) {
		case *ISR:
			from, to, isr, routine, cpu = e.InitialTime, e.At, true, e.Routine, e.CPU
		case *DPC:
			from, to, routine, cpu = e.InitialTime, e.At, e.Routine, e.CPU
		case *CSwitch:
			if int(e.CPU) == wakeCPU {
				switches = append(switches, e)
			}
			continue
		default:
			continue
		}
		if from > to || to <= E || from >= w.Woke || (int(cpu) != tickCPU && int(cpu) != wakeCPU) {
			continue
		}
		ivs = append(ivs, interval{max(from, E), min(to, w.Woke), int(cpu), isr, images.nameOf(routine)})
	}
	sort.SliceStable(switches, func(i, j int) bool { return switches[i].At < switches[j].At })
	inWindow := 0
	for _, s := range switches {
		if s.At > E && s.At < w.Woke {
			inWindow++
		}
	}
	if len(ivs)+inWindow > MaxWindowEvents {
		return a, fmt.Errorf("%d events inside one wait's excess (at most %d): %w", len(ivs)+inWindow, MaxWindowEvents, ErrInput)
	}

	bounds := []int64{E, w.Woke, clock, readyAt, switchAt}
	for _, iv := range ivs {
		bounds = append(bounds, iv.from, iv.to)
	}
	for _, s := range switches {
		if s.At > readyAt && s.At < switchAt {
			bounds = append(bounds, s.At)
		}
	}
	sort.Slice(bounds, func(i, j int) bool { return bounds[i] < bounds[j] })

	leaves := map[leafKey]int64{}
	si := 0 // switches[:si] are at or before the current point
	unknownRun := false
	for k := 0; k+1 < len(bounds); k++ {
		x, y := bounds[k], bounds[k+1]
		if x == y || x < E || y > w.Woke {
			continue
		}
		cpu := wakeCPU
		if x < readyAt {
			cpu = tickCPU
		}
		// The innermost execution on that processor: the one entered last
		// (an ISR interrupts a DPC, never the reverse).
		best := -1
		for i, iv := range ivs {
			if iv.cpu == cpu && iv.from <= x && x < iv.to &&
				(best < 0 || iv.from > ivs[best].from || (iv.from == ivs[best].from && iv.isr && !ivs[best].isr)) {
				best = i
			}
		}
		var key leafKey
		switch {
		case best >= 0 && ivs[best].isr:
			key = leafKey{cause: ISRTime, image: ivs[best].image}
		case best >= 0:
			key = leafKey{cause: DPCTime, image: ivs[best].image}
		case haveClock && x < clock:
			key = leafKey{cause: ClockLate}
		case ready != nil && x < readyAt:
			if haveClock {
				key = leafKey{cause: TimerExpiry}
			} else {
				key = leafKey{cause: Unexplained}
			}
		case ready != nil && sw != nil && x < switchAt:
			for si < len(switches) && switches[si].At <= x {
				si++
			}
			key = leafKey{cause: Unexplained}
			unknownRun = unknownRun || si == 0
			if si > 0 {
				run := switches[si-1]
				switch {
				case run.NewThreadID == 0 && sw.OldThreadID == 0 && sw.PreviousCState > 0:
					key = leafKey{cause: IdleExit}
				case run.NewThreadID == 0 && remote:
					key = leafKey{cause: RemoteReady}
				case run.NewThreadID != 0 && run.NewThreadID != w.ThreadID:
					key = leafKey{cause: OtherThreads, tid: run.NewThreadID, priority: run.NewThreadPriority}
				}
			}
		default:
			key = leafKey{cause: Unexplained}
		}
		leaves[key] += y - x
	}
	if unknownRun {
		a.Notes = append(a.Notes, "no CSwitch on the waking processor before the ready: what ran first is unexplained")
	}

	// Durations: each leaf's span laid end to end from the expected tick,
	// converted at its ends, so that they sum to Excess exactly.
	keys := make([]leafKey, 0, len(leaves))
	for k := range leaves {
		keys = append(keys, k)
	}
	rank := map[Cause]int{}
	for i, c := range Causes {
		rank[c] = i
	}
	sort.Slice(keys, func(i, j int) bool {
		ki, kj := keys[i], keys[j]
		if ki.cause != kj.cause {
			return rank[ki.cause] < rank[kj.cause]
		}
		if ki.image != kj.image {
			return ki.image < kj.image
		}
		if ki.tid != kj.tid {
			return ki.tid < kj.tid
		}
		return ki.priority < kj.priority
	})
	byCause := map[Cause]time.Duration{}
	drivers := map[string]*DriverTime{}
	threads := map[[2]int64]*ThreadTime{}
	at := E
	for _, k := range keys {
		d := ns(at+leaves[k]) - ns(at)
		at += leaves[k]
		byCause[k.cause] += d
		switch k.cause {
		case ISRTime, DPCTime:
			dt := drivers[k.image]
			if dt == nil {
				dt = &DriverTime{Image: k.image}
				drivers[k.image] = dt
			}
			if k.cause == ISRTime {
				dt.ISR += d
			} else {
				dt.DPC += d
			}
		case OtherThreads:
			id := [2]int64{int64(k.tid), int64(k.priority)}
			if threads[id] == nil {
				threads[id] = &ThreadTime{ThreadID: k.tid, Priority: k.priority}
			}
			threads[id].Time += d
		}
	}
	for _, c := range Causes {
		if d := byCause[c]; d > 0 || c == Unexplained {
			a.Causes = append(a.Causes, Share{c, d})
		}
	}
	sort.SliceStable(a.Causes, func(i, j int) bool { return a.Causes[i].Time > a.Causes[j].Time })
	for _, dt := range drivers {
		a.Drivers = append(a.Drivers, *dt)
	}
	sort.Slice(a.Drivers, func(i, j int) bool {
		ti, tj := a.Drivers[i].ISR+a.Drivers[i].DPC, a.Drivers[j].ISR+a.Drivers[j].DPC
		if ti != tj {
			return ti > tj
		}
		return a.Drivers[i].Image < a.Drivers[j].Image
	})
	for _, tt := range threads {
		a.Threads = append(a.Threads, *tt)
	}
	sort.Slice(a.Threads, func(i, j int) bool {
		if a.Threads[i].Time != a.Threads[j].Time {
			return a.Threads[i].Time > a.Threads[j].Time
		}
		if a.Threads[i].ThreadID != a.Threads[j].ThreadID {
			return a.Threads[i].ThreadID < a.Threads[j].ThreadID
		}
		return a.Threads[i].Priority < a.Threads[j].Priority
	})
	return a, nil
}
