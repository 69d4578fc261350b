package explain

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/tickscope/tickscope/internal/attribution"
)

// flightRun drives a flight recorder as the Linux trace does: waits of
// 1 ms back to back from t=0 on one CPU, each wait's events in two pages
// (one from its start, with a sched_switch, one from its middle), and a
// drain every 100 waits (100 ms) that takes the waits ended so far, then
// the pages read so far, then prunes. late gives a wait's lateness (the
// threshold is 0: a wait with lateness > 0 is late). It gives the
// recorder and the pages kept, by the ids (the page's first event's time)
// they carry.
func flightRun(t *testing.T, waits int, late func(i int) int64, maxWindows int, edit func(i int, s *pageScan)) (*flightRecorder, []int64) {
	t.Helper()
	const ms = 1_000_000
	f := newFlightRecorder(maxWindows, &losses{})
	nextWait, nextPage := 0, 0
	drain := func(now int64) {
		for ; nextWait < waits && int64(nextWait+1)*ms <= now; nextWait++ {
			l := late(nextWait)
			f.waited(nextWait, int64(nextWait)*ms, int64(nextWait+1)*ms, l, l > 0)
		}
		for ; nextPage < 2*waits && int64(nextPage+1)*ms/2 <= now; nextPage++ {
			first := int64(nextPage) * ms / 2
			s := pageScan{Events: true, First: first, Last: first + ms/2 - 1}
			if nextPage%2 == 0 {
				s.HasSwitch, s.Switch = true, first
			}
			if edit != nil {
				edit(nextPage, &s)
			}
			data := binary.LittleEndian.AppendUint64(nil, uint64(first))
			f.loss.page(0, s)
			f.add(0, s, data)
		}
		f.prune()
	}
	for now := int64(100 * ms); ; now += 100 * ms {
		drain(now)
		if nextWait == waits && nextPage == 2*waits {
			break
		}
	}
	pages, _ := f.kept()
	var ids []int64
	for _, p := range pages[0] {
		ids = append(ids, int64(binary.LittleEndian.Uint64(p)))
	}
	return f, ids
}

// Only the pages overlapping a late wait's window (and, before it, the
// last with a sched_switch) are kept, and what is held at once does not
// grow with the waits that were not late.
func TestFlightKeepsOnlyLateWindows(t *testing.T) {
	const ms = 1_000_000
	late := func(i int) int64 {
		if i == 50 {
			return 1
		}
		return 0
	}
	fShort, short := flightRun(t, 1000, late, MaxExplained, nil)
	// Wait 50 runs from 50 ms to 51 ms; its window from 49 ms (the margin
	// before the wait before's end): the pages from 49 to 51 ms, the one
	// before with a sched_switch (48 ms), and nothing else but the ring's
	// last pages (the run's end).
	for _, want := range []int64{48 * ms, 49 * ms, 49*ms + ms/2, 50 * ms, 50*ms + ms/2, 51 * ms} {
		if !slices.Contains(short, want) {
			t.Errorf("page at %d ns of late wait 50's window dropped; kept %v", want, short)
		}
	}
	for _, id := range short {
		if id < 48*ms || id > 51*ms && id < 998*ms {
			t.Errorf("page at %d ns kept, outside every window and the ring", id)
		}
	}
	// What is held at once (one drain's 200 pages, the ring's and the
	// window's) and what is kept are the same for a run 20 times as long.
	fLong, long := flightRun(t, 20000, late, MaxExplained, nil)
	if fLong.peak != fShort.peak || fLong.peak > 200+3+6 {
		t.Errorf("held at most %d pages in 1000 waits, %d in 20000: want the same, one drain's 200 and a few", fShort.peak, fLong.peak)
	}
	if len(long) != len(short) {
		t.Errorf("kept %d pages of 20000 waits, %d of 1000: want the same", len(long), len(short))
	}
	if fLong.read != 40000 {
		t.Errorf("read %d pages, want 40000", fLong.read)
	}
	// A second late wait keeps its window too.
	_, two := flightRun(t, 20000, func(i int) int64 { return late(i) + late(i-7727) }, MaxExplained, nil)
	if !slices.Contains(two, 7777*ms) || len(two) <= len(long) {
		t.Errorf("late wait 7777's page dropped: kept %v", two)
	}
}

// The attribution looks back from a wait for what each CPU ran: the last
// page with a sched_switch before the window is kept however old, and the
// pages between it and the window, which hold none, are dropped.
func TestFlightKeepsTheCarrier(t *testing.T) {
	const ms = 1_000_000
	late := func(i int) int64 {
		if i == 500 {
			return 1
		}
		return 0
	}
	// Switches only in the page at 200 ms (id 400) and in late wait
	// 500's second half.
	edit := func(i int, s *pageScan) {
		s.HasSwitch = i == 400 || i == 1001
		s.Switch = s.First + 10
		if i == 300 {
			s.HasIdle, s.Idle = true, s.First+20
		}
	}
	_, kept := flightRun(t, 1000, late, MaxExplained, edit)
	for _, want := range []int64{200 * ms, 150 * ms} {
		if !slices.Contains(kept, want) {
			t.Errorf("the last page with a sched_switch (or cpu_idle) before the window, at %d ns, was dropped: kept %v", want, kept)
		}
	}
	for _, id := range kept {
		if id > 200*ms && id < 499*ms {
			t.Errorf("page at %d ns kept: between the carrier and the window, it holds nothing the attribution reads", id)
		}
	}
}

// At most maxWindows windows: the worst waits by lateness stay, the
// least late go with their pages.
func TestFlightKeepsTheWorst(t *testing.T) {
	const ms = 1_000_000
	late := map[int]int64{100: 10, 300: 30, 500: 20, 700: 20}
	f, kept := flightRun(t, 1000, func(i int) int64 { return late[i] }, 2, nil)
	var idx []int
	for _, w := range f.windows {
		idx = append(idx, w.index)
	}
	// 500 and 700 are as late: the earlier stays, as judge keeps it.
	if !slices.Equal(idx, []int{300, 500}) {
		t.Errorf("windows of waits %v kept, want 300 and 500", idx)
	}
	for _, gone := range []int64{100 * ms, 700 * ms} {
		if slices.Contains(kept, gone) {
			t.Errorf("page at %d ns of a dropped window kept", gone)
		}
	}
	if !slices.Contains(kept, 300*ms) || !slices.Contains(kept, 500*ms) {
		t.Errorf("pages of the kept windows dropped: %v", kept)
	}
}

// A page after lost events makes a gap from the last event read before
// it (TestLosses): a window it overlaps is not covered, and a gap far
// from every window is dropped.
func TestFlightGaps(t *testing.T) {
	const ms = 1_000_000
	late := func(i int) int64 {
		if i == 50 || i == 60 {
			return 1
		}
		return 0
	}
	edit := func(i int, s *pageScan) {
		// Lost before wait 50's second half, and before waits 300 and 400.
		s.Lost = i == 101 || i == 600 || i == 800
	}
	f, _ := flightRun(t, 1000, late, MaxExplained, edit)
	if !lostIn(f.loss.gaps, waitRec{Start: 50 * ms, End: 51 * ms}) {
		t.Error("wait 50, whose events were lost in its window, is covered")
	}
	if lostIn(f.loss.gaps, waitRec{Start: 60 * ms, End: 61 * ms}) {
		t.Error("wait 60, with nothing lost, is not covered")
	}
	// The gap at 300 ms is dropped: far from every window, and not the
	// last (which a later window's look-back would stop at).
	want := []attribution.Gap{{CPU: 0, From: 50*ms + ms/2 - 1, To: 50*ms + ms/2}, {CPU: 0, From: 400*ms - 1, To: 400 * ms}}
	if !slices.Equal(f.loss.gaps, want) {
		t.Errorf("gaps %+v, want %+v", f.loss.gaps, want)
	}
}

// judge with the flight recorder: a late wait whose window lost events
// is not attributed and counted as not covered; it explains the
// MaxExplained worst by measured lateness.
func TestJudgeFlightNotCovered(t *testing.T) {
	const tid = 42
	evs := []attribution.Event{
		{Time: 100, CPU: 0, Kind: attribution.HrtimerStart, PID: tid, Hrtimer: 1, Expires: 1000, SoftExpires: 1000},
		{Time: 2100, CPU: 0, Kind: attribution.HrtimerStart, PID: tid, Hrtimer: 1, Expires: 3000, SoftExpires: 3000},
	}
	waits := []waitRec{{Deadline: 1000, Start: 90, End: 1500}, {Deadline: 3000, Start: 2000, End: 3600}, {Deadline: 4000, Start: 3600, End: 4010}}
	gaps := []attribution.Gap{{CPU: 0, From: 2500, To: 2600}}
	res := &Result{Layer: 1, Late: []LateWait{}, Trace: &TraceInfo{Flight: &FlightRecorder{}}}
	judge(res, tid, waits, Options{Over: 100, FlightRecorder: true}, evs, gaps)
	if len(res.Late) != 2 || res.Trace.Flight.NotCovered != 1 {
		t.Fatalf("%d late, %d not covered; want 2 and 1", len(res.Late), res.Trace.Flight.NotCovered)
	}
	for _, l := range res.Late {
		if l.NotAttributed != (l.Index == 1) {
			t.Errorf("wait %d: not attributed %v", l.Index, l.NotAttributed)
		}
	}
	if !slices.ContainsFunc(res.Notes, func(n string) bool {
		return n == "the flight recorder did not cover 1 of the 2 late waits explained: events were lost in their windows, and they are not attributed"
	}) {
		t.Errorf("notes %q: want the wait not covered", res.Notes)
	}
	// The observer's untraced stretches (every CPU's) are not losses.
	res = &Result{Layer: 1, Late: []LateWait{}, Trace: &TraceInfo{Flight: &FlightRecorder{}}}
	judge(res, tid, waits, Options{Over: 100, FlightRecorder: true}, evs, []attribution.Gap{{CPU: attribution.AllCPUs, From: 2500, To: 2600}})
	if res.Trace.Flight.NotCovered != 0 {
		t.Errorf("an untraced stretch counted as not covered")
	}
}

// markCarriers finds what a scan back from t finds: on random pages in
// time order, at every time around them.
func TestCarriersMarkAsAScanBack(t *testing.T) {
	scanBack := func(pages []*flightPage, t int64) []bool {
		need := make([]bool, len(pages))
		sw, idle := false, false
		for i := len(pages) - 1; i >= 0; i-- {
			p := pages[i]
			if !sw && p.HasSwitch && p.Switch < t {
				sw, need[i] = true, true
			}
			if !idle && p.HasIdle && p.Idle < t {
				idle, need[i] = true, true
			}
		}
		return need
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var pages []*flightPage
		at := int64(0)
		for range rng.IntN(40) {
			// Its events from First to Last; the next page's begin where
			// they end, or after.
			p := &flightPage{pageScan: pageScan{Events: true, First: at, Last: at + rng.Int64N(10)}}
			if rng.IntN(4) == 0 {
				p.HasSwitch, p.Switch = true, p.First+rng.Int64N(p.Last-p.First+1)
			}
			if rng.IntN(6) == 0 {
				p.HasIdle, p.Idle = true, p.First+rng.Int64N(p.Last-p.First+1)
			}
			at = p.Last + rng.Int64N(2)
			pages = append(pages, p)
		}
		for i, p := range pages {
			link(pages[:i], p)
		}
		for t0 := int64(-1); t0 <= at+1; t0++ {
			got := make([]bool, len(pages))
			lo := sort.Search(len(pages), func(i int) bool { return pages[i].Last >= t0 })
			markCarriers(pages, lo, t0, got)
			if want := scanBack(pages, t0); !slices.Equal(got, want) {
				t.Fatalf("round %d, t=%d: marked %v, a scan back marks %v", round, t0, got, want)
			}
		}
	}
}

// BenchmarkFlightPrune is a drain's prune with 1,000 windows kept on one
// CPU of about 40,000 pages read: with a sched_switch and a cpu_idle
// every other page, with a sched_switch only every 50th, and with no
// cpu_idle at all (power:cpu_idle missing, or a CPU that never idles).
func BenchmarkFlightPrune(b *testing.B) {
	const ms = 1_000_000
	for _, c := range []struct {
		name        string
		switchEvery int
		idleEvery   int
	}{{"switch-and-idle", 2, 2}, {"sparse-switch", 50, 2}, {"no-idle", 2, 0}} {
		b.Run(c.name, func(b *testing.B) {
			f := newFlightRecorder(MaxExplained, &losses{})
			data := make([]byte, 4096)
			for i := range 20_000 {
				f.waited(i, int64(i)*ms, int64(i+1)*ms, int64(i%20), i%20 == 19)
				for half := range 2 {
					n := 2*i + half
					first := int64(n) * ms / 2
					s := pageScan{Events: true, First: first, Last: first + ms/2 - 1}
					if n%c.switchEvery == 0 {
						s.HasSwitch, s.Switch = true, first
					}
					if c.idleEvery > 0 && n%c.idleEvery == 0 {
						s.HasIdle, s.Idle = true, first
					}
					f.loss.page(0, s)
					f.add(0, s, data)
				}
			}
			f.prune()
			for b.Loop() {
				f.prune()
			}
			b.ReportMetric(float64(f.held()), "pages-held")
		})
	}
}
