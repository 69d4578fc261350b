package explain

import (
	"math"

	"github.com/tickscope/tickscope/internal/attribution"
)

// lossMark finds one CPU's gaps (attribution.Gap) as its buffer's pages
// are read, in order, by a full trace and by the flight recorder alike:
// a page the kernel marks as following lost events makes a gap from the
// last event read before it to the page's first event. Before the CPU's
// first event read, the gap reaches back to the run's start: no page
// says where the loss began. A mark on a page with no event is kept for
// the next page's first event, and after the last page read reaches to
// the run's end.
type lossMark struct {
	cpu int
	// last is the time of the last event read, if hasLast; pending that
	// a loss waits for the next event to end its gap.
	last    int64
	hasLast bool
	pending bool
}

// page takes a page read: lost is its kernel's mark; events whether it
// has a data event, first and last their times. It gives gaps with the
// gap it ends appended.
func (m *lossMark) page(lost, events bool, first, last int64, gaps []attribution.Gap) []attribution.Gap {
	m.pending = m.pending || lost
	if !events {
		return gaps
	}
	if m.pending {
		gaps = append(gaps, attribution.Gap{CPU: m.cpu, From: m.since(), To: first})
		m.pending = false
	}
	m.last, m.hasLast = last, true
	return gaps
}

// end is the CPU's last page read: a loss still waiting for an event
// reaches to the run's end. It gives gaps with that gap appended.
func (m *lossMark) end(gaps []attribution.Gap) []attribution.Gap {
	if m.pending {
		gaps = append(gaps, attribution.Gap{CPU: m.cpu, From: m.since(), To: math.MaxInt64})
		m.pending = false
	}
	return gaps
}

// since is where a loss now would begin: the last event read, or the
// run's start.
func (m *lossMark) since() int64 {
	if !m.hasLast {
		return math.MinInt64
	}
	return m.last
}
