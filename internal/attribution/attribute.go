package attribution

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strconv"
)

// Kind is a kind of cause of lateness.
type Kind string

// The causes, in the order of the doc's timeline.
const (
	KindArmedLate     Kind = "armed late"
	KindNotAttributed Kind = "not attributed"
	KindSlack         Kind = "timer slack"
	KindIRQDelay      Kind = "IRQ delay"
	KindTimerIRQ      Kind = "timer IRQ"
	KindIRQ           Kind = "IRQ"
	KindSoftirq       Kind = "softirq"
	KindNMI           Kind = "NMI"
	KindBlocking      Kind = "blocking thread"
	KindThread        Kind = "thread"
	KindRemote        Kind = "remote wake-up/migration"
	KindIdleExit      Kind = "idle exit"
	KindReturn        Kind = "return to user space"
	KindSelfBlock     Kind = "own thread blocked again"
	KindRunQueue      Kind = "run-queue wait"
	KindUnexplained   Kind = "unexplained"
)

// Kinds is every kind, in the order above: read it, never change it.
var Kinds = []Kind{
	KindArmedLate, KindNotAttributed, KindSlack, KindIRQDelay, KindTimerIRQ, KindIRQ, KindSoftirq, KindNMI,
	KindBlocking, KindThread, KindRemote, KindIdleExit, KindReturn, KindSelfBlock, KindRunQueue, KindUnexplained,
}

// OverlapRule says how time claimed by more than one cause is split.
const OverlapRule = "each nanosecond goes to one cause: before the timer's IRQ, the slack up to expires, then the IRQ delay less the other IRQs and NMIs that ran in it; from the IRQ on, the innermost context on the CPU that held the wait (NMI, then hard IRQ, then softirq, then thread)"

// Wait is one wait, as its hrtimer_start and our own clock say.
type Wait struct {
	// TID is the waiting thread; CPU the one that armed the timer.
	TID, CPU int
	// Hrtimer is the timer's address, from hrtimer_start, which the
	// expiry is matched by; Armed that event's time.
	Hrtimer uint64
	Armed   int64
	// Expires and SoftExpires are hrtimer_start's: softexpires is the
	// deadline asked for, expires it plus the thread's timer slack.
	Expires, SoftExpires int64
	// Woke is the thread's clock read after the wait returned.
	Woke int64
}

// LatenessNS is Woke less SoftExpires.
func (w Wait) LatenessNS() int64 { return w.Woke - w.SoftExpires }

// Cause is one part of a wait's lateness.
type Cause struct {
	Kind Kind
	// Name is who did it, and only that: a thread as comm:pid, an IRQ's
	// handler or a vector's row (LOC, RES, CAL), a softirq's kind, an
	// NMI's handler; "" for the kinds no one did.
	Name string
	// Context is where, or in what state, for the kinds that happen to
	// a CPU rather than being done by someone: an IRQ delay's idle CPU
	// ("cpu1 in idle state 2", "cpu1 idle"), a remote wake-up's or an
	// idle exit's CPU, the CPU events were lost on. It is not a name.
	// An IRQ delay is only ever an idle CPU's: on a busy one no event
	// shows what held the interrupt off, and that time is unexplained.
	Context string
	NS      int64
}

// Attribution is a wait's lateness split into causes.
type Attribution struct {
	Wait       Wait
	LatenessNS int64
	// Causes add up to LatenessNS exactly when the wait was late (none
	// otherwise), largest first.
	Causes []Cause
	// ArmedLate: the deadline had passed when the timer was started, by
	// InheritedNS; the lateness is the one cause KindArmedLate.
	ArmedLate   bool
	InheritedNS int64
	// NotAttributed: events were lost on a CPU the wait used, and the
	// lateness is the one cause KindNotAttributed.
	NotAttributed bool
	// Reasons say why a part is unexplained or nothing attributed.
	Reasons []string
	// TimerCPU is where the timer fired, RunCPU where the thread ran
	// after it (-1: not known); Migrated is true when they differ or the
	// thread was moved in between.
	TimerCPU, RunCPU int
	Migrated         bool
	// IdleState is the timer CPU's idle state when the timer was due
	// (expires), when IdleKnown; IdleExit when it was not idle.
	IdleState int
	IdleKnown bool
	// Blocking is the blocking thread as comm:pid, or "".
	Blocking string
}

// Explained is the lateness given a cause other than unexplained or not
// attributed.
func (a Attribution) Explained() int64 {
	var n int64
	for _, c := range a.Causes {
		if c.Kind != KindUnexplained && c.Kind != KindNotAttributed {
			n += c.NS
		}
	}
	return n
}

// Timeline is a trace's events, of every CPU, in time order, indexed by
// what a wait looks back for: made once for all the waits Explain
// attributes from them, not sorted, checked or scanned back again for
// each (among a million events, that took 36 ms a wait: BENCHMARKS.md).
type Timeline struct {
	evs []Event
	// switches and idles are, by CPU, the indices in evs of its
	// sched_switch and cpu_idle events, in order.
	switches, idles map[int][]int
}

// NewTimeline makes evs a Timeline, sorting them in place by time (as
// Sort does) unless they are already.
func NewTimeline(evs []Event) Timeline {
	for i := 1; i < len(evs); i++ {
		if evs[i].Time < evs[i-1].Time {
			Sort(evs)
			break
		}
	}
	tl := Timeline{evs: evs, switches: map[int][]int{}, idles: map[int][]int{}}
	for i := range evs {
		switch e := &evs[i]; e.Kind {
		case Switch:
			tl.switches[e.CPU] = append(tl.switches[e.CPU], i)
		case CPUIdle:
			tl.idles[e.CPU] = append(tl.idles[e.CPU], i)
		}
	}
	return tl
}

// lastBefore is the last of the indices idx (in order) before lo.
func lastBefore(idx []int, lo int) (int, bool) {
	k, _ := slices.BinarySearch(idx, lo)
	if k == 0 {
		return 0, false
	}
	return idx[k-1], true
}

// Explain attributes one wait's lateness from the events of every CPU
// and the gaps in them.
func Explain(w Wait, tl Timeline, gaps []Gap) Attribution {
	a := Attribution{Wait: w, LatenessNS: w.LatenessNS(), TimerCPU: -1, RunCPU: -1, IdleState: IdleExit}
	if a.LatenessNS <= 0 {
		return a
	}
	if w.Armed >= w.SoftExpires {
		a.ArmedLate = true
		a.InheritedNS = min(w.Armed-w.SoftExpires, a.LatenessNS)
		a.Causes = []Cause{{Kind: KindArmedLate, NS: a.LatenessNS}}
		return a
	}
	evs := tl.evs
	lo := sort.Search(len(evs), func(i int) bool { return evs[i].Time >= w.Armed })
	hi := sort.Search(len(evs), func(i int) bool { return evs[i].Time > w.Woke })
	x := &explainer{w: w, tl: tl, evs: evs, lo: lo, hi: hi, gaps: gaps, lines: map[int]*cpuLine{}, a: &a}
	x.run()
	return a
}

type explainer struct {
	w      Wait
	tl     Timeline
	evs    []Event // tl's
	lo, hi int     // the window's events: evs[lo:hi]
	gaps   []Gap
	lines  map[int]*cpuLine
	a      *Attribution
	parts  []Cause
	// The blocking thread's CPU and stretch, once found.
	blockCPU, blockStretch int
	blockName              string
	blockSet               bool
}

func (x *explainer) add(k Kind, name string, ns int64) {
	if ns > 0 {
		x.parts = append(x.parts, Cause{Kind: k, Name: name, NS: ns})
	}
}

// addAt adds a part that happened to a CPU, in context.
func (x *explainer) addAt(k Kind, context string, ns int64) {
	if ns > 0 {
		x.parts = append(x.parts, Cause{Kind: k, Context: context, NS: ns})
	}
}

func (x *explainer) reason(s string) {
	if !slices.Contains(x.a.Reasons, s) {
		x.a.Reasons = append(x.a.Reasons, s)
	}
}

func (x *explainer) run() {
	w, a := x.w, x.a
	S, E, end := w.SoftExpires, max(w.Expires, w.SoftExpires), w.Woke
	win := x.evs[x.lo:x.hi]

	// The timer's expiry, its wake-up of our thread and our switch-in.
	xi := slices.IndexFunc(win, func(e Event) bool {
		return e.Kind == HrtimerExpireEntry && e.Hrtimer == w.Hrtimer && e.Time >= S
	})
	if xi < 0 {
		if x.gapOn(nil) {
			return
		}
		x.add(KindSlack, "", min(E, end)-S)
		x.add(KindUnexplained, "", end-max(E, S))
		x.reason("no hrtimer_expire_entry of this timer between its start and the wake-up")
		x.finish()
		return
	}
	X := win[xi]
	tc := X.CPU
	a.TimerCPU = tc
	wi := -1
	for i := xi; i < len(win); i++ {
		if (win[i].Kind == Waking || win[i].Kind == Wakeup) && win[i].TargetPID == w.TID {
			wi = i
			break
		}
	}
	from := xi
	if wi >= 0 {
		from = wi
	}
	ri := -1
	for i := from; i < len(win); i++ {
		if win[i].Kind == Switch && win[i].NextPID == w.TID {
			ri = i
			break
		}
	}
	// The CPU that held the wait, from the wake-up on.
	type hold struct {
		at  int64
		cpu int
	}
	holds := []hold{{X.Time, tc}}
	// After the switch-in our thread may sleep again before its clock
	// read (the Go runtime, a page fault, a lock): that time is its own,
	// and it may be woken onto another CPU.
	var blocked [][2]int64
	if wi >= 0 {
		sleeping := int64(-1)
		for i := wi; i < len(win); i++ {
			e := win[i]
			switch {
			case e.TargetPID == w.TID && (e.Kind == Waking || e.Kind == Wakeup || e.Kind == Migrate) && e.TargetCPU >= 0:
				holds = append(holds, hold{e.Time, e.TargetCPU})
			case e.Kind == Switch && e.NextPID == w.TID:
				if holds[len(holds)-1].cpu != e.CPU {
					holds = append(holds, hold{e.Time, e.CPU})
				}
				if sleeping >= 0 {
					blocked = append(blocked, [2]int64{sleeping, e.Time})
					sleeping = -1
				}
			case e.Kind == Switch && e.PrevPID == w.TID && ri >= 0 && i > ri && e.Blocked() && sleeping < 0:
				sleeping = e.Time
			}
		}
		if sleeping >= 0 {
			blocked = append(blocked, [2]int64{sleeping, end})
		}
	} else if ri >= 0 && holds[len(holds)-1].cpu != win[ri].CPU {
		holds = append(holds, hold{win[ri].Time, win[ri].CPU})
	}
	a.RunCPU = holds[len(holds)-1].cpu
	used := []int{w.CPU}
	for _, h := range holds {
		if h.cpu != tc {
			a.Migrated = true
		}
		used = append(used, h.cpu)
	}
	if x.gapOn(used) {
		return
	}

	tl := x.line(tc, X)
	I := X.Time
	irqSeen := tl.timerFrom >= 0
	if irqSeen {
		I = tl.timerFrom
	} else {
		x.reason("no IRQ entry around the timer's expiry on cpu" + strconv.Itoa(tc) + ": the time from expires to the expiry is unexplained")
	}
	I = max(I, S)
	if l, ok := tl.at(E); ok && l.kind == ctxThread {
		a.IdleKnown = l.known && l.pid == 0 && l.idleKnown
		if a.IdleKnown {
			a.IdleState = l.idle
		}
	}

	// Slack, then the IRQ delay.
	x.add(KindSlack, "", min(E, I, end)-S)
	if E < I {
		tl.walk(E, min(I, end), func(f, t int64, l label) {
			switch {
			case l.kind == ctxNMI:
				x.add(KindNMI, l.name, t-f)
			case l.kind == ctxIRQ && !l.timer:
				x.add(KindIRQ, l.name, t-f)
			case !irqSeen:
				// No traced interrupt says when the timer's IRQ came:
				// what the CPU was last seen doing is not its cause.
				x.add(KindUnexplained, "", t-f)
			case l.kind == ctxThread && l.known && l.pid == 0:
				// An idle CPU: its idle state's exit, or the host.
				x.addAt(KindIRQDelay, delayContext(tc, l), t-f)
			case l.kind == ctxThread && l.known:
				// A thread ran, but no event shows that it (interrupts
				// off) or the host held the interrupt off.
				x.add(KindUnexplained, "", t-f)
				x.reason("the timer's IRQ came late on cpu" + strconv.Itoa(tc) + " while " + thread(l.comm, l.pid) + " ran: no event shows what held it off")
			case l.kind == ctxThread:
				x.add(KindUnexplained, "", t-f)
				x.reason("the timer's IRQ came late on cpu" + strconv.Itoa(tc) + " and no sched_switch says what the CPU ran")
			default:
				// A softirq ran (hard IRQs on): it did not hold the
				// timer's IRQ off as far as events show.
				x.add(KindUnexplained, "", t-f)
				x.reason("the timer's IRQ came late on cpu" + strconv.Itoa(tc) + " during " + l.name + ": no event shows what held it off")
			}
		})
	}
	// Woken but never seen switched in before the clock read: the
	// threads that ran after the wake-up are not known to have kept ours
	// waiting (the interrupts that ran are still theirs).
	unseen := int64(math.MaxInt64)
	if wi >= 0 && ri < 0 {
		unseen = win[wi].Time
	}
	// From the IRQ on, the innermost context of the CPU holding the wait.
	for i, h := range holds {
		f, t := max(h.at, I), end
		if i == 0 {
			f = I
		}
		if i+1 < len(holds) {
			t = min(holds[i+1].at, end)
		}
		if f >= t {
			continue
		}
		l := tl
		if h.cpu != tc {
			l = x.line(h.cpu, X)
		}
		cpu := h.cpu
		l.walk(f, t, func(f, t int64, lb label) {
			// Cut out the stretches our thread slept again.
			for _, b := range blocked {
				if b[1] <= f || b[0] >= t {
					continue
				}
				if b[0] > f {
					x.classify(cpu, tc, lb, b[0]-f)
					f = b[0]
				}
				e := min(b[1], t)
				x.add(KindSelfBlock, "", e-f)
				f = e
			}
			if f < t && lb.kind == ctxThread && t > unseen {
				if f < unseen {
					x.classify(cpu, tc, lb, unseen-f)
					f = unseen
				}
				x.add(KindUnexplained, "", t-f)
				x.reason("woken, but no sched_switch to the thread before the wait ended: its run-queue time is unexplained")
				f = t
			}
			if f < t {
				x.classify(cpu, tc, lb, t-f)
			}
		})
	}
	if x.blockSet {
		a.Blocking = x.blockName
	}
	x.finish()
}

// delayContext is an IRQ delay's context: its idle CPU and, when traced,
// its idle state.
func delayContext(cpu int, l label) string {
	c := "cpu" + strconv.Itoa(cpu)
	if l.idleKnown && l.idle != IdleExit {
		return c + " in idle state " + strconv.Itoa(l.idle)
	}
	return c + " idle"
}

func (x *explainer) classify(cpu, tc int, l label, ns int64) {
	switch l.kind {
	case ctxNMI:
		x.add(KindNMI, l.name, ns)
	case ctxIRQ:
		if l.timer {
			x.add(KindTimerIRQ, l.name, ns)
		} else {
			x.add(KindIRQ, l.name, ns)
		}
	case ctxSoftirq:
		x.add(KindSoftirq, l.name, ns)
	default:
		c := "cpu" + strconv.Itoa(cpu)
		switch {
		case !l.known:
			x.add(KindUnexplained, "", ns)
			x.reason("no sched_switch on " + c + " says which thread ran")
		case l.pid == x.w.TID:
			x.add(KindReturn, "", ns)
		case l.pid == 0 && cpu != tc:
			x.addAt(KindRemote, c, ns)
		case l.pid == 0:
			x.addAt(KindIdleExit, c, ns)
		default:
			name := thread(l.comm, l.pid)
			if !x.blockSet {
				x.blockSet, x.blockCPU, x.blockStretch, x.blockName = true, cpu, l.stretch, name
			}
			if x.blockCPU == cpu && x.blockStretch == l.stretch {
				x.add(KindBlocking, name, ns)
			} else {
				x.add(KindThread, name, ns)
			}
		}
	}
}

// gapOn reports a gap overlapping the wait on one of the CPUs (any CPU
// for nil), and then makes the attribution "not attributed".
func (x *explainer) gapOn(cpus []int) bool {
	for _, g := range x.gaps {
		if g.From > x.w.Woke || g.To < x.w.Armed || cpus != nil && g.CPU != AllCPUs && !slices.Contains(cpus, g.CPU) {
			continue
		}
		x.a.NotAttributed = true
		if g.CPU == AllCPUs {
			x.a.Causes = []Cause{{Kind: KindNotAttributed, NS: x.a.LatenessNS}}
			x.a.Reasons = append(x.a.Reasons, "the trace was not recording during the wait")
			return true
		}
		c := "cpu" + strconv.Itoa(g.CPU)
		x.a.Causes = []Cause{{Kind: KindNotAttributed, Context: c, NS: x.a.LatenessNS}}
		x.a.Reasons = append(x.a.Reasons, "events were lost on "+c+" during the wait")
		return true
	}
	return false
}

// finish merges the parts by cause, largest first, and makes the
// remainder unexplained, so that they add up to the lateness.
func (x *explainer) finish() {
	var sum int64
	idx := map[Cause]int{}
	var out []Cause
	for _, p := range x.parts {
		sum += p.NS
		k := Cause{Kind: p.Kind, Name: p.Name, Context: p.Context}
		if i, ok := idx[k]; ok {
			out[i].NS += p.NS
			continue
		}
		idx[k] = len(out)
		out = append(out, p)
	}
	if rest := x.a.LatenessNS - sum; rest > 0 {
		k := Cause{Kind: KindUnexplained}
		if i, ok := idx[k]; ok {
			out[i].NS += rest
		} else {
			out = append(out, Cause{Kind: KindUnexplained, NS: rest})
		}
	}
	slices.SortStableFunc(out, func(p, q Cause) int { return cmp.Compare(q.NS, p.NS) })
	x.a.Causes = out
}
