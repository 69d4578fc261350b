package explain

import (
	"cmp"
	"math"
	"slices"

	"github.com/tickscope/tickscope/internal/attribution"
)

// losses finds a trace's gaps (attribution.Gap) as its CPUs' pages are
// read, drain by drain, by a full trace and by the flight recorder
// alike:
//   - a page the kernel marks as following lost events makes a gap from
//     the last event read before it on its CPU to the page's first
//     event; a mark on a page with no event waits for the next event;
//   - a CPU whose per_cpu stats count a loss during a drain makes the
//     stretch the drain read a gap, and the next event read ends it too:
//     a loss no page marks (a commit overrun, a drop) says nowhere where
//     it was. An overrun, which the next page read marks as well, makes
//     both gaps: the wider one costs waits attributed near a loss, not
//     their truth.
//
// Before a CPU's first event read, a gap reaches back to the run's
// start, and one that no event ends reaches to the run's end: no page
// says where such a loss began or ended.
type losses struct {
	cpus map[int]*lossMark
	gaps []attribution.Gap
}

// lossMark is one CPU's: last is the time of the last event read, if
// hasLast; pending that a loss waits for the next event to end its gap.
type lossMark struct {
	last    int64
	hasLast bool
	pending bool
}

func (l *losses) cpu(c int) *lossMark {
	if l.cpus == nil {
		l.cpus = map[int]*lossMark{}
	}
	m := l.cpus[c]
	if m == nil {
		m = &lossMark{}
		l.cpus[c] = m
	}
	return m
}

// page takes a page read from CPU c's buffer, as scanPage found it.
func (l *losses) page(c int, s pageScan) {
	m := l.cpu(c)
	m.pending = m.pending || s.Lost
	if !s.Events {
		return
	}
	if m.pending {
		l.gaps = append(l.gaps, attribution.Gap{CPU: c, From: l.since(c), To: s.First})
		m.pending = false
	}
	m.last, m.hasLast = s.Last, true
}

// statsLost says CPU c's stats counted a loss during the drain that
// began at before (since(c) as it began).
func (l *losses) statsLost(c int, before int64) {
	if to := l.since(c); to > before {
		l.gaps = append(l.gaps, attribution.Gap{CPU: c, From: before, To: to})
	}
	// The next event read ends it too, from before if the drain read none.
	l.cpu(c).pending = true
}

// since is where a loss on CPU c would begin now: its last event read,
// or the run's start.
func (l *losses) since(c int) int64 {
	if m := l.cpu(c); m.hasLast {
		return m.last
	}
	return math.MinInt64
}

// result is the gaps once the last page is read: with those no event
// ended reaching to the run's end, in order of their start, then CPU, so
// that what names the first gap across a wait names the same one every
// run.
func (l *losses) result() []attribution.Gap {
	gaps := slices.Clone(l.gaps)
	for c, m := range l.cpus {
		if m.pending {
			gaps = append(gaps, attribution.Gap{CPU: c, From: l.since(c), To: math.MaxInt64})
		}
	}
	slices.SortFunc(gaps, func(a, b attribution.Gap) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.CPU, b.CPU), cmp.Compare(a.To, b.To))
	})
	return gaps
}
