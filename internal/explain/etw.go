package explain

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/attribution"
	"github.com/tickscope/tickscope/internal/etwkernel"
	"github.com/tickscope/tickscope/internal/printable"
)

// Windows' layer 1: the waits attributed from an ETW kernel session
// (system_windows.go runs it) with etwkernel's tick model. This file is
// pure, so that the attribution from decoded events into a Result is
// tested on every OS.

// The causes of a late wait on Windows beside attribution's: the tick
// model's part, and etwkernel's causes, under their own names.
const (
	// KindTick is the part of a wait's lateness the timer period in
	// force allows: a Sleep ends on the first clock tick at or after its
	// deadline. Its name is the period.
	KindTick attribution.Kind = "timer tick"
)

// etwKind is the attribution kind of an etwkernel cause: its own words
// ("ISR", "DPC", "clock interrupt late", ...), with attribution's where
// they mean the same (idle exit, unexplained).
func etwKind(c etwkernel.Cause) attribution.Kind {
	switch c {
	case etwkernel.IdleExit:
		return attribution.KindIdleExit
	case etwkernel.Unexplained:
		return attribution.KindUnexplained
	}
	return attribution.Kind(c)
}

// waitExplainer is a Trace that attributes each wait from its own
// events rather than from tracefs's (Windows' ETW session): Run asks it
// instead of the Linux attribution.
type waitExplainer interface {
	// explainWait attributes one late wait of the measuring thread tid,
	// measured with method.
	explainWait(w waitRec, tid int, method string) attribution.Attribution
	// resultNotes are what the Result says once about the trace.
	resultNotes(method string) []string
}

// layerChooser is a System whose layers are not Linux's (Windows): it
// chooses instead of Choose.
type layerChooser interface {
	chooseLayer(asked Layer, canTrace bool, whyNot string) (Chosen, error)
}

// elevation is what layer 1 needs on Windows.
const elevation = "an elevated terminal (a kernel ETW session, " + etwkernel.SessionName + "): run tickscope explain in a terminal started with \"Run as administrator\""

// NeedsElevation is why layer 1 cannot run on Windows without it.
const NeedsElevation = "it needs " + elevation

// NoWindowsLayer0 is why Windows has no layer 0. The thread's cycle
// count (QueryThreadCycleTime) and times (GetThreadTimes) around a wait
// say how long it ran, not how long it waited ready to run: a Sleep that
// ended late because its thread was not scheduled and one whose timer
// fired late both show the same few cycles, and GetThreadTimes counts in
// whole clock ticks. Without a run-queue wait there is nothing honest to
// split a wait's lateness with, so layer 0 is refused rather than
// reported as all unexplained.
const NoWindowsLayer0 = "Windows keeps no per-thread time spent ready to run that a process can read without tracing (thread cycle counts and times say only how long it ran), so there is nothing to split the lateness with; layer 1 (ETW: --layer auto or 1) needs " + elevation

// chooseETW is Choose for Windows: layer 1 when elevated, and no layer 0.
func chooseETW(asked Layer, canTrace bool, whyNot string) (Chosen, error) {
	if asked == Layer0 {
		return Chosen{}, &LayerError{Layer: Layer0, Why: NoWindowsLayer0}
	}
	if !canTrace {
		return Chosen{}, &LayerError{Layer: Layer1, Why: whyNot}
	}
	if asked == Layer1 {
		return Chosen{Layer1, "asked for with --layer 1: a kernel ETW session of its own, " + etwkernel.SessionName}, nil
	}
	return Chosen{Layer1, "elevated: a kernel ETW session of its own, " + etwkernel.SessionName + " (Windows has no layer 0)"}, nil
}

// tickMethods are the methods whose wait ends on a clock tick, which the
// tick model rounds: Sleep, a waitable timer that is not high-resolution,
// and the multimedia and timer-queue timers, all driven by the tick.
// Every other method (a high-resolution waitable timer, Go's runtime
// timers, which are high-resolution where Windows has them, a spin) is
// not rounded: its whole lateness is excess.
var tickMethods = map[string]bool{"sleep": true, "waitable": true, "timesetevent": true, "timerqueue": true}

// MaxETWEvents bounds the events one run keeps (about 150 MB at most):
// events past it are counted, not kept, and waits after the first one
// dropped are not attributed.
const MaxETWEvents = 2_000_000

// etwLookahead is how far past a wait's end its events are searched: a
// DPC or ISR is logged when it returns, after a wait it overlapped.
const etwLookahead = int64(time.Millisecond)

// etwTrace is what an ETW session gave, on the samples' clock (ns).
type etwTrace struct {
	// events are sorted by time; switches are each processor's CSwitches
	// by time.
	events   []etwkernel.Event
	switches map[uint16][]*etwkernel.CSwitch
	images   *etwkernel.Images
	// period is the timer period in force as measuring began, 0 when it
	// was not read.
	period time.Duration
	// clock is the clock interrupts' times, ascending, from a source
	// that knows them (the model of Windows timers); nil from a session,
	// whose clock-interrupt event has no documented layout.
	clock []int64
	// lostEvents and lostBuffers are ETW's counts (EventsLost,
	// RealTimeBuffersLost); undecoded the records of the classes explain
	// reads that did not decode; droppedAt the time of the first event
	// not kept (MaxETWEvents), 0 when all were kept.
	lostEvents, lostBuffers uint64
	undecoded               int
	droppedAt               int64
	dropped                 int
}

// newETWTrace indexes decoded events whose times are in ns.
func newETWTrace(evs []etwkernel.Event, period time.Duration) *etwTrace {
	t := &etwTrace{events: evs, switches: map[uint16][]*etwkernel.CSwitch{}, images: &etwkernel.Images{}, period: period}
	slices.SortStableFunc(t.events, func(a, b etwkernel.Event) int { return cmp.Compare(a.Meta().At, b.Meta().At) })
	for _, ev := range t.events {
		switch e := ev.(type) {
		case *etwkernel.CSwitch:
			t.switches[e.CPU] = append(t.switches[e.CPU], e)
		case *etwkernel.ImageLoad:
			t.images.Add(e)
		}
	}
	return t
}

// eventClass names what kind of event ev is, for TraceInfo.Missing.
func eventClass(ev etwkernel.Event) string {
	switch ev.(type) {
	case *etwkernel.DPC:
		return "DPC"
	case *etwkernel.ISR:
		return "ISR"
	case *etwkernel.CSwitch:
		return "CSwitch"
	case *etwkernel.ReadyThread:
		return "ReadyThread"
	case *etwkernel.ImageLoad:
		return "Image"
	}
	return ""
}

// lost is every loss ETW reported.
func (t *etwTrace) lost() uint64 { return t.lostEvents + t.lostBuffers }

// window is the events a wait's attribution reads: those logged from its
// start to just after its end, and each processor's last CSwitch before
// its start (what was running when it began).
func (t *etwTrace) window(w waitRec) []etwkernel.Event {
	lo := sort.Search(len(t.events), func(i int) bool { return t.events[i].Meta().At >= w.Start })
	hi := sort.Search(len(t.events), func(i int) bool { return t.events[i].Meta().At > w.End+etwLookahead })
	out := slices.Clone(t.events[lo:hi])
	for _, sw := range t.switches {
		i := sort.Search(len(sw), func(i int) bool { return sw[i].At >= w.Start })
		if i > 0 {
			out = append(out, sw[i-1])
		}
	}
	return out
}

func threadName(tid uint32, priority int8) string {
	return fmt.Sprintf("tid %d (priority %d)", tid, priority)
}

func (t *etwTrace) explainWait(w waitRec, tid int, method string) attribution.Attribution {
	a := attribution.Attribution{
		Wait:       attribution.Wait{TID: tid, CPU: -1, Armed: w.Start, Expires: w.Deadline, SoftExpires: w.Deadline, Woke: w.End},
		LatenessNS: w.lateness(), TimerCPU: -1, RunCPU: -1, IdleState: attribution.IdleExit,
	}
	if a.LatenessNS <= 0 {
		return a
	}
	if w.Start >= w.Deadline {
		a.ArmedLate = true
		a.InheritedNS = min(w.Start-w.Deadline, a.LatenessNS)
		a.Causes = []attribution.Cause{{Kind: attribution.KindArmedLate, NS: a.LatenessNS}}
		return a
	}
	notAttributed := func(why string) attribution.Attribution {
		a.NotAttributed = true
		a.Causes = []attribution.Cause{{Kind: attribution.KindNotAttributed, NS: a.LatenessNS}}
		a.Reasons = append(a.Reasons, why)
		return a
	}
	if n := t.lost(); n > 0 {
		return notAttributed(fmt.Sprintf("ETW lost %d events and %d real-time buffers in the run, at times it does not say: no wait is attributed across a loss", t.lostEvents, t.lostBuffers))
	}
	if t.droppedAt != 0 && w.End+etwLookahead >= t.droppedAt {
		return notAttributed(fmt.Sprintf("after the first %d events, tickscope kept no more of them", MaxETWEvents))
	}
	tick := tickMethods[method]
	if tick && t.period <= 0 {
		return notAttributed("the timer period in force was not read: the tick model cannot say what part of the lateness the tick allows")
	}
	in := etwkernel.Input{
		Wait:   etwkernel.Wait{ThreadID: uint32(tid), Start: w.Start, Requested: time.Duration(w.Deadline - w.Start), Woke: w.End, HighResolution: !tick},
		Ticks:  etwkernel.TickModel{Period: t.period},
		Freq:   int64(time.Second),
		Events: t.window(w),
		Images: t.images,
	}
	if tick && t.clock != nil {
		// The tick the wait should have ended on, and its clock
		// interrupt: the first at or after the deadline.
		lo := sort.Search(len(t.clock), func(i int) bool { return t.clock[i] >= w.Deadline })
		hi := sort.Search(len(t.clock), func(i int) bool { return t.clock[i] > w.End })
		if lo < len(t.clock) {
			in.Ticks.Ticks, in.ClockAt = t.clock[lo:max(hi, lo+1)], t.clock[lo]
		}
	}
	ea, err := etwkernel.Attribute(in)
	if err != nil {
		return notAttributed(err.Error())
	}
	return fromETW(a, ea, t.period)
}

// fromETW fills a (its wait and lateness set) from etwkernel's
// attribution: the tick's part, then each cause, ISR and DPC by driver
// image and the other threads by id, so that the causes sum to the
// lateness exactly (what rounding leaves is unexplained).
func fromETW(a attribution.Attribution, ea etwkernel.Attribution, period time.Duration) attribution.Attribution {
	var causes []attribution.Cause
	if ea.Allowed > 0 {
		causes = append(causes, attribution.Cause{Kind: KindTick, Name: "period " + period.String(), NS: int64(ea.Allowed)})
	}
	named := func(k attribution.Kind, total time.Duration, parts []attribution.Cause) {
		var sum int64
		for _, p := range parts {
			if p.NS > 0 {
				causes = append(causes, p)
				sum += p.NS
			}
		}
		if rest := int64(total) - sum; rest > 0 {
			causes = append(causes, attribution.Cause{Kind: k, NS: rest})
		}
	}
	for _, s := range ea.Causes {
		k := etwKind(s.Cause)
		switch s.Cause {
		case etwkernel.ISRTime, etwkernel.DPCTime:
			var parts []attribution.Cause
			for _, d := range ea.Drivers {
				ns := d.DPC
				if s.Cause == etwkernel.ISRTime {
					ns = d.ISR
				}
				parts = append(parts, attribution.Cause{Kind: k, Name: d.Image, NS: int64(ns)})
			}
			named(k, s.Time, parts)
		case etwkernel.OtherThreads:
			var parts []attribution.Cause
			for _, th := range ea.Threads {
				parts = append(parts, attribution.Cause{Kind: k, Name: threadName(th.ThreadID, th.Priority), NS: int64(th.Time)})
			}
			named(k, s.Time, parts)
		case etwkernel.IdleExit:
			causes = append(causes, attribution.Cause{Kind: k, Name: fmt.Sprintf("cpu%d C%d", ea.WakeCPU, ea.CState), NS: int64(s.Time)})
		case etwkernel.RemoteReady:
			causes = append(causes, attribution.Cause{Kind: k, Name: fmt.Sprintf("cpu%d to cpu%d", ea.ReadyCPU, ea.WakeCPU), NS: int64(s.Time)})
		default:
			if s.Time > 0 {
				causes = append(causes, attribution.Cause{Kind: k, NS: int64(s.Time)})
			}
		}
	}
	var sum int64
	for _, c := range causes {
		sum += c.NS
	}
	unexplained := a.LatenessNS - sum
	var out []attribution.Cause
	for _, c := range causes {
		if c.Kind == attribution.KindUnexplained {
			unexplained += c.NS
			continue
		}
		out = append(out, c)
	}
	if unexplained < 0 {
		// More than the lateness: never seen from Attribute, whose causes
		// sum to its excess; the largest cause gives the difference back.
		slices.SortStableFunc(out, func(p, q attribution.Cause) int { return cmp.Compare(q.NS, p.NS) })
		out[0].NS += unexplained
		unexplained = 0
	}
	out = append(out, attribution.Cause{Kind: attribution.KindUnexplained, NS: unexplained})
	slices.SortStableFunc(out, func(p, q attribution.Cause) int { return cmp.Compare(q.NS, p.NS) })
	a.Causes = out
	a.Reasons = append(a.Reasons, ea.Notes...)
	a.TimerCPU, a.RunCPU = ea.ReadyCPU, ea.WakeCPU
	a.Migrated = ea.ReadyCPU >= 0 && ea.WakeCPU >= 0 && ea.ReadyCPU != ea.WakeCPU
	if ea.CState >= 0 {
		a.IdleState, a.IdleKnown = ea.CState, true
	}
	return a
}

// resultNotes say what the session saw and what the model assumes.
func (t *etwTrace) resultNotes(method string) []string {
	var notes []string
	if tickMethods[method] {
		if t.period > 0 && t.clock != nil {
			notes = append(notes, fmt.Sprintf("the tick model: a %s wait ends on the first clock tick at or after its deadline; the timer period in force as measuring began was %s, and the clock interrupts' times are known, so the tick's part is up to that tick and the time from its clock interrupt to the thread's ready is the timer's", method, t.period))
		} else if t.period > 0 {
			notes = append(notes, fmt.Sprintf("the tick model: a %s wait ends on the first clock tick at or after its deadline; the timer period in force as measuring began was %s, and as the tick's phase is not observed (the clock interrupt's ETW event has no documented layout), up to a whole period after each deadline is the tick's and the time from the expected tick to the thread's ready is unexplained", method, t.period))
		}
	} else {
		notes = append(notes, "method "+method+" does not end on a clock tick: its whole lateness is split by cause, none allowed by the tick")
	}
	notes = append(notes, "other threads are named by thread id: the session logs no process events")
	if t.undecoded > 0 {
		notes = append(notes, fmt.Sprintf("%d events of the classes explain reads did not decode (a version or size Microsoft Learn does not document) and were left out", t.undecoded))
	}
	if t.dropped > 0 {
		notes = append(notes, fmt.Sprintf("%d events past the first %d were not kept: the waits after them are not attributed", t.dropped, MaxETWEvents))
	}
	if s, err := etwkernel.Summarize(t.events, t.images, int64(time.Second)); err == nil && len(s.Drivers) > 0 {
		var parts []string
		for _, d := range s.Drivers[:min(3, len(s.Drivers))] {
			var kinds []string
			if d.ISR.Count > 0 {
				kinds = append(kinds, fmt.Sprintf("ISR highest %s total %s (%d)", d.ISR.Highest, d.ISR.Total, d.ISR.Count))
			}
			if d.DPC.Count > 0 {
				kinds = append(kinds, fmt.Sprintf("DPC highest %s total %s (%d)", d.DPC.Highest, d.DPC.Total, d.DPC.Count))
			}
			parts = append(parts, printable.Line(d.Image)+": "+strings.Join(kinds, ", "))
		}
		notes = append(notes, "ISR and DPC execution by driver over the run, worst first: "+strings.Join(parts, "; "))
	}
	notes = append(notes, "not yet checked on real Windows: the event layouts are Microsoft Learn's and the tick model tickscope's, tested on synthetic events only")
	return notes
}
