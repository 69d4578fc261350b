package attribution

import (
	"math"
	"sort"
	"strconv"
)

// A CPU's context at an instant, innermost first.
type ctxKind uint8

const (
	ctxThread ctxKind = iota
	ctxSoftirq
	ctxIRQ
	ctxNMI
)

// label is what a CPU was doing over a segment.
type label struct {
	kind ctxKind
	name string
	// id is the IRQ or softirq context's number; timer is true for the
	// IRQ that expired the wait's timer.
	id    int
	timer bool
	// The thread current on the CPU (under any IRQ): known once a
	// sched_switch says; stretch counts its switches.
	pid, stretch int
	comm         string
	known        bool
	// The CPU's cpu_idle state, when one was traced.
	idle      int
	idleKnown bool
}

type seg struct {
	from, to int64
	lab      label
}

// cpuLine is one CPU's contexts over the wait.
type cpuLine struct {
	segs []seg
	nmis [][2]int64
	// timerFrom is the entry of the IRQ that expired the timer, -1 if not
	// this CPU's or not traced.
	timerFrom int64
}

type frame struct {
	kind  ctxKind
	name  string
	id    int
	start int64
}

// line builds CPU cpu's contexts from the wait's start to its end.
func (x *explainer) line(cpu int, expiry Event) *cpuLine {
	if l, ok := x.lines[cpu]; ok {
		return l
	}
	l := &cpuLine{timerFrom: -1}
	x.lines[cpu] = l
	var cur label
	cur.idle = IdleExit
	// What the CPU was running, and its idle state, when the wait began:
	// not from before a gap, whose events may have changed both.
	floor := int64(math.MinInt64)
	for _, g := range x.gaps {
		if g.on(cpu) && g.From < x.w.Armed {
			floor = max(floor, g.To)
		}
	}
	if i, ok := lastBefore(x.tl.switches[cpu], x.lo); ok && x.evs[i].Time >= floor {
		e := &x.evs[i]
		cur.pid, cur.comm, cur.known = e.NextPID, e.NextComm, true
	}
	if i, ok := lastBefore(x.tl.idles[cpu], x.lo); ok && x.evs[i].Time >= floor {
		cur.idle, cur.idleKnown = x.evs[i].State, true
	}
	var stack []frame
	var unknown []int // segments emitted before the CPU's first switch
	ids, timerID := 0, -1
	last := x.w.Armed
	emit := func(to int64) {
		if to <= last {
			return
		}
		lb := cur
		if n := len(stack); n > 0 {
			lb.kind, lb.name, lb.id = stack[n-1].kind, stack[n-1].name, stack[n-1].id
		}
		if !lb.known {
			unknown = append(unknown, len(l.segs))
		}
		l.segs = append(l.segs, seg{last, to, lb})
		last = to
	}
	pop := func(k ctxKind) {
		if n := len(stack); n > 0 && stack[n-1].kind == k {
			stack = stack[:n-1]
		}
	}
	for _, e := range x.evs[x.lo:x.hi] {
		if e.CPU != cpu {
			continue
		}
		emit(e.Time)
		switch e.Kind {
		case IRQEntry, VectorEntry:
			ids++
			stack = append(stack, frame{ctxIRQ, irqName(e), ids, e.Time})
		case IRQExit, VectorExit:
			pop(ctxIRQ)
		case SoftirqEntry:
			ids++
			stack = append(stack, frame{ctxSoftirq, SoftirqName(e.Vec), ids, e.Time})
		case SoftirqExit:
			pop(ctxSoftirq)
		case NMI:
			d := max(e.DurationNS, 0)
			l.nmis = append(l.nmis, [2]int64{e.Time - min(d, e.Time-x.w.Armed), e.Time})
		case HrtimerExpireEntry:
			if e == expiry {
				for i := len(stack) - 1; i >= 0; i-- {
					if stack[i].kind == ctxIRQ {
						timerID, l.timerFrom = stack[i].id, stack[i].start
						break
					}
				}
			}
		case Switch:
			if !cur.known {
				for _, i := range unknown {
					s := &l.segs[i].lab
					s.pid, s.comm, s.known = e.PrevPID, e.PrevComm, true
				}
				unknown = nil
			}
			cur.pid, cur.comm, cur.known = e.NextPID, e.NextComm, true
			cur.stretch++
		case CPUIdle:
			cur.idle, cur.idleKnown = e.State, true
		}
	}
	emit(x.w.Woke)
	if timerID >= 0 {
		for i := range l.segs {
			if l.segs[i].lab.id == timerID {
				l.segs[i].lab.timer = true
			}
		}
	}
	return l
}

func irqName(e Event) string {
	if e.Kind == VectorEntry {
		return e.Name
	}
	return strconv.Itoa(e.IRQ) + ":" + e.Name
}

// at gives the label at instant t.
func (l *cpuLine) at(t int64) (label, bool) {
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].to > t })
	if i == len(l.segs) || l.segs[i].from > t {
		return label{}, false
	}
	return l.segs[i].lab, true
}

// walk calls fn for each piece of [from, to) with its label, NMIs laid
// over everything else; the pieces cover [from, to) exactly, those no
// segment covers with an unknown thread.
func (l *cpuLine) walk(from, to int64, fn func(f, t int64, lb label)) {
	if from >= to {
		return
	}
	nmi := func(f, t int64, lb label) {
		for _, n := range l.nmis {
			if n[1] <= f || n[0] >= t {
				continue
			}
			if n[0] > f {
				fn(f, n[0], lb)
				f = n[0]
			}
			e := min(n[1], t)
			if e > f {
				fn(f, e, label{kind: ctxNMI, name: "NMI"})
				f = e
			}
		}
		if f < t {
			fn(f, t, lb)
		}
	}
	at := from
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].to > from })
	for ; i < len(l.segs) && at < to; i++ {
		s := l.segs[i]
		if s.from > at {
			nmi(at, min(s.from, to), label{})
			at = min(s.from, to)
		}
		e := min(s.to, to)
		if e > at {
			nmi(at, e, s.lab)
			at = e
		}
	}
	if at < to {
		nmi(at, to, label{})
	}
}
