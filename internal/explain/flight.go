package explain

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/tickscope/tickscope/internal/attribution"
)

// The flight recorder (--flight-recorder, layer 1 on Linux) keeps of the
// trace only what the late waits' attribution reads, so that the memory a
// run's trace takes does not grow with the run's length: the buffer is
// still drained every drainEvery (so that the kernel never overwrites
// what has not been judged, and a loss is seen where it happened), but a
// page read is dropped as soon as no wait can need it. The threshold must
// be known before the run (--over): the run's own p99 is known only at
// its end, when the pages it would need are long gone.
//
// A page is kept while it is one of these:
//   - the ring: it ends after the horizon, the end of the last wait
//     judged less flightMargin, so that the wait being measured now, if it
//     turns out late, finds its window whole;
//   - a window's: it overlaps a kept late wait's window, from flightMargin
//     before the wait's start (and the wait before's end) to its end;
//   - a carrier: on its CPU, the last page with a sched_switch (or a
//     cpu_idle) before a kept window's start, or before the horizon. The
//     attribution looks back from a wait for what each CPU was running and
//     its idle state; pages between the carrier and the window hold
//     neither event, so dropping them changes nothing it finds.
//
// At most MaxExplained windows are kept: the worst waits by their
// measured lateness (judge then explains those and no other), the least
// late dropped when a worse one comes. So the pages kept are bounded by
// the windows' and the ring's, whatever the number of waits that were not
// late, and the run's length.
//
// Losses are gaps, found as in a full trace (losses): a kept window a
// gap overlaps is not covered, and its wait is not attributed. Gaps that
// no wait can need are dropped as pages are.

// flightMargin is how far before a window's wait the window begins, and
// how far before the last judged wait's end the ring reaches.
const flightMargin = int64(time.Millisecond)

// flightFree is the most dropped pages kept for reuse.
const flightFree = 64

// pageScan is what retention needs of a page: its events' times, where
// its first sched_switch and cpu_idle are, and whether the kernel lost
// events before it.
type pageScan struct {
	// Events says it has a data event; First and Last are the times of
	// its first and last (CLOCK_MONOTONIC ns).
	Events      bool
	First, Last int64
	// Switch and Idle are the times of its first sched_switch and
	// cpu_idle; HasSwitch and HasIdle whether it has one.
	Switch, Idle       int64
	HasSwitch, HasIdle bool
	// Lost: the kernel lost events on this CPU before this page.
	Lost bool
}

type flightPage struct {
	pageScan
	data []byte
	// lastSwitch and lastIdle are the index, in its CPU's pages, of the
	// last page at or before this one with a sched_switch, and with a
	// cpu_idle: -1 if there is none.
	lastSwitch, lastIdle int
}

// flightWindow is a kept late wait's window.
type flightWindow struct {
	index      int
	lateness   int64
	from, to   int64
	start, end int64
}

type flightCPU struct {
	pages []*flightPage
}

// flightRecorder is the flight recorder's retention. It is not safe for
// concurrent use: its trace holds a lock around it.
type flightRecorder struct {
	maxWindows int
	cpus       map[int]*flightCPU
	windows    []flightWindow // in order of from
	// loss is the trace's, whose gaps prune drops when no wait can
	// need them.
	loss *losses
	// judged is the end of the last wait seen; judging that every
	// earlier wait's fate is known.
	judged    int64
	hasJudged bool
	free      [][]byte
	// need and gapNeed are prune's, kept so that a drain allocates
	// nothing for them.
	need, gapNeed []bool

	// What it did: pages read, and the most it held at once.
	read, peak int
	pageBytes  int
}

// newFlightRecorder keeps at most maxWindows windows, and the gaps of
// loss, which the pages it is given must have been given to.
func newFlightRecorder(maxWindows int, loss *losses) *flightRecorder {
	return &flightRecorder{maxWindows: maxWindows, cpus: map[int]*flightCPU{}, loss: loss}
}

func (f *flightRecorder) cpu(c int) *flightCPU {
	cp := f.cpus[c]
	if cp == nil {
		cp = &flightCPU{}
		f.cpus[c] = cp
	}
	return cp
}

// add takes a page read from CPU c's buffer, copying it; its losses
// must have been given the page.
func (f *flightRecorder) add(c int, s pageScan, data []byte) {
	cp := f.cpu(c)
	f.read++
	f.pageBytes = max(f.pageBytes, len(data))
	if !s.Events {
		return // nothing in it to attribute from
	}
	var buf []byte
	if n := len(f.free); n > 0 && cap(f.free[n-1]) >= len(data) {
		buf, f.free = f.free[n-1][:len(data)], f.free[:n-1]
	} else {
		buf = make([]byte, len(data))
	}
	copy(buf, data)
	p := &flightPage{pageScan: s, data: buf}
	link(cp.pages, p)
	cp.pages = append(cp.pages, p)
	f.peak = max(f.peak, f.held())
}

// held is the pages held now.
func (f *flightRecorder) held() int {
	n := 0
	for _, cp := range f.cpus {
		n += len(cp.pages)
	}
	return n
}

// waited is told of every wait as it ends (the warm-up's too), in order:
// a late one's window is kept.
func (f *flightRecorder) waited(index int, start, end, lateness int64, late bool) {
	prev := start
	if f.hasJudged {
		prev = min(prev, f.judged)
	}
	f.judged, f.hasJudged = max(f.judged, end), true
	if !late {
		return
	}
	w := flightWindow{index: index, lateness: lateness, from: prev - flightMargin, to: end, start: start, end: end}
	if len(f.windows) >= f.maxWindows {
		// Drop the least late (of equals, the latest: judge keeps the
		// earliest), unless this one is less late still.
		least := 0
		for i, k := range f.windows {
			if k.lateness < f.windows[least].lateness || k.lateness == f.windows[least].lateness && k.index > f.windows[least].index {
				least = i
			}
		}
		if lateness <= f.windows[least].lateness {
			return
		}
		f.windows = slices.Delete(f.windows, least, least+1)
	}
	i, _ := slices.BinarySearchFunc(f.windows, w, func(a, b flightWindow) int { return cmp.Compare(a.from, b.from) })
	f.windows = slices.Insert(f.windows, i, w)
}

// horizon is the time before which no wait still to be judged reaches.
func (f *flightRecorder) horizon() int64 {
	if !f.hasJudged {
		return math.MinInt64
	}
	return f.judged - flightMargin
}

// link sets p's lastSwitch and lastIdle, p going after pages.
func link(pages []*flightPage, p *flightPage) {
	i := len(pages)
	p.lastSwitch, p.lastIdle = -1, -1
	if i > 0 {
		p.lastSwitch, p.lastIdle = pages[i-1].lastSwitch, pages[i-1].lastIdle
	}
	if p.HasSwitch {
		p.lastSwitch = i
	}
	if p.HasIdle {
		p.lastIdle = i
	}
}

// markCarriers marks on need the last page with a sched_switch before t
// and the last with a cpu_idle before t; lo is the first page that ends
// at or after t (len(pages) if none does). A CPU's pages are in time
// order: the pages before lo end before t, and those after it begin at
// or after it, so the carrier is the last at or before lo, or, when that is
// lo and its event is not before t, the last before lo.
func markCarriers(pages []*flightPage, lo int, t int64, need []bool) {
	at := min(lo, len(pages)-1)
	if at < 0 {
		return
	}
	p := pages[at]
	mark := func(last int, atOrAfter bool, before func(*flightPage) int) {
		if last == at && atOrAfter {
			last = -1
			if at > 0 {
				last = before(pages[at-1])
			}
		}
		if last >= 0 {
			need[last] = true
		}
	}
	mark(p.lastSwitch, p.Switch >= t, func(q *flightPage) int { return q.lastSwitch })
	mark(p.lastIdle, p.Idle >= t, func(q *flightPage) int { return q.lastIdle })
}

// prune drops every page and gap no wait can need any more.
func (f *flightRecorder) prune() {
	h := f.horizon()
	for _, cp := range f.cpus {
		pages := cp.pages
		need := slices.Grow(f.need[:0], len(pages))[:len(pages)]
		clear(need)
		f.need = need
		ring := sort.Search(len(pages), func(i int) bool { return pages[i].Last >= h })
		for i := ring; i < len(pages); i++ {
			need[i] = true
		}
		markCarriers(pages, ring, h, need)
		for _, w := range f.windows {
			lo := sort.Search(len(pages), func(i int) bool { return pages[i].Last >= w.from })
			for i := lo; i < len(pages) && pages[i].First <= w.to; i++ {
				need[i] = true
			}
			markCarriers(pages, lo, w.from, need)
		}
		kept := pages[:0]
		for i, p := range pages {
			if need[i] {
				link(kept, p)
				kept = append(kept, p)
			} else if len(f.free) < flightFree {
				f.free = append(f.free, p.data)
			}
		}
		clear(pages[len(kept):])
		cp.pages = kept
	}
	// Which gaps to keep is decided over them all before any is dropped:
	// a gap's need depends on the others.
	gaps := f.loss.gaps
	keep := slices.Grow(f.gapNeed[:0], len(gaps))[:len(gaps)]
	f.gapNeed = keep
	for i, g := range gaps {
		keep[i] = f.gapNeeded(g, h)
	}
	n := 0
	for i, g := range gaps {
		if keep[i] {
			gaps[n] = g
			n++
		}
	}
	f.loss.gaps = gaps[:n]
}

// gapNeeded says whether a gap can still matter: it overlaps a kept
// window or reaches past the horizon, or it is, on its CPU, the last
// before a kept window or the horizon (the attribution takes nothing of
// a CPU from before its last gap).
func (f *flightRecorder) gapNeeded(g attribution.Gap, h int64) bool {
	if g.To >= h {
		return true
	}
	lastBefore := func(t int64) bool {
		for _, o := range f.loss.gaps {
			if o.CPU == g.CPU && o.From < t && o.To > g.To {
				return false
			}
		}
		return g.From < t
	}
	if lastBefore(h) {
		return true
	}
	for _, w := range f.windows {
		if g.From <= w.to && g.To >= w.from || lastBefore(w.from) {
			return true
		}
	}
	return false
}

// kept gives the pages held, by CPU, in order, and the gaps, once the
// last page is read (losses.result).
func (f *flightRecorder) kept() (map[int][][]byte, []attribution.Gap) {
	out := map[int][][]byte{}
	for c, cp := range f.cpus {
		for _, p := range cp.pages {
			out[c] = append(out[c], p.data)
		}
	}
	return out, f.loss.result()
}

// FlightRecorder is what the flight recorder did, in the trace's info.
type FlightRecorder struct {
	// PagesRead is every page read from the buffers; PagesKept those
	// kept to the end, for the late waits' windows; PeakPages the most
	// held at once, and PageBytes a page's size.
	PagesRead int `json:"pages_read"`
	PagesKept int `json:"pages_kept"`
	PeakPages int `json:"peak_pages"`
	PageBytes int `json:"page_bytes"`
	// NotCovered is the late waits explained whose window the trace did
	// not cover whole (events lost in it): they are not attributed.
	NotCovered int `json:"not_covered"`
}
