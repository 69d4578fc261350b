package etwkernel

import (
	"fmt"
	"sort"
	"time"
)

// BucketBounds are the upper bounds of the execution-time buckets of
// Summary; the last bucket is at or above the last bound:
//
//	< 1 µs, 1–10 µs, 10–25 µs, 25–100 µs, 100 µs–1 ms, ≥ 1 ms
//
// Decades show where the bulk of a driver's routines fall (most run in
// a few µs); 25 µs and 100 µs are Microsoft's ceilings for an ISR and
// for a DPC ("Example 15: Measuring DPC/ISR Time"), so the counts above
// them are the routines over that guidance; 1 ms is the wait tickscope
// measures, Sleep(1): one routine that long holds its processor for a
// whole 1 ms tick. LatencyMon's own buckets (250 µs to 4 ms) start where
// Sleep(1)'s trouble is already a quarter of its wait, and are not used.
var BucketBounds = [...]time.Duration{time.Microsecond, 10 * time.Microsecond, 25 * time.Microsecond, 100 * time.Microsecond, time.Millisecond}

// NumBuckets is the number of execution-time buckets.
const NumBuckets = len(BucketBounds) + 1

// Exec is one driver's routines of one kind (ISR or DPC): how many, the
// longest, the total, and the counts by BucketBounds. An execution is
// the event's time stamp minus its InitialTime, inclusive of whatever
// interrupted it (an ISR inside a DPC counts in both, as in LatencyMon
// and xperf's DPC/ISR report).
type Exec struct {
	Count   int                `json:"count"`
	Highest time.Duration      `json:"highest_ns"`
	Total   time.Duration      `json:"total_ns"`
	Buckets [NumBuckets]uint64 `json:"buckets"`
	highest int64
	total   int64
}

// DriverStats is one driver's ISR and DPC executions.
type DriverStats struct {
	Image string `json:"image"`
	ISR   Exec   `json:"isr"`
	DPC   Exec   `json:"dpc"`
}

// Summary is the LatencyMon-style table of a session: by driver, the
// highest and total ISR and DPC execution time and the counts by bucket.
type Summary struct {
	// Drivers are worst first: by highest execution, then total.
	Drivers []DriverStats `json:"drivers"`
	// Inconsistent counts ISR and DPC events whose InitialTime is after
	// their time stamp: not counted.
	Inconsistent int `json:"inconsistent"`
}

// Summarize tallies the ISR and DPC events by the driver of their
// routine. images nil: built from the ImageLoad events among events.
func Summarize(events []Event, images *Images, freq int64) (Summary, error) {
	var s Summary
	if freq <= 0 {
		return s, fmt.Errorf("QPC frequency %d: %w", freq, ErrClock)
	}
	if images == nil {
		images = &Images{}
		for _, ev := range events {
			if im, ok := ev.(*ImageLoad); ok {
				images.Add(im)
			}
		}
	}
	by := map[string]*DriverStats{}
	for _, ev := range events {
		var from, to int64
		var routine uint64
		isr := false
		switch e := ev.(type) {
		case *ISR:
			from, to, routine, isr = e.InitialTime, e.At, e.Routine, true
		case *DPC:
			from, to, routine = e.InitialTime, e.At, e.Routine
		default:
			continue
		}
		if from > to {
			s.Inconsistent++
			continue
		}
		name := images.nameOf(routine)
		d := by[name]
		if d == nil {
			d = &DriverStats{Image: name}
			by[name] = d
		}
		x := &d.DPC
		if isr {
			x = &d.ISR
		}
		ticks := to - from
		if ticks < 0 { // the subtraction wrapped: a span no clock makes
			s.Inconsistent++
			continue
		}
		x.Count++
		x.highest = max(x.highest, ticks)
		if x.total+ticks < x.total {
			x.total = 1<<63 - 1
		} else {
			x.total += ticks
		}
		dur := toDuration(ticks, freq)
		b := sort.Search(len(BucketBounds), func(i int) bool { return dur < BucketBounds[i] })
		x.Buckets[b]++
	}
	for _, d := range by {
		for _, x := range []*Exec{&d.ISR, &d.DPC} {
			x.Highest, x.Total = toDuration(x.highest, freq), toDuration(x.total, freq)
			x.highest, x.total = 0, 0
		}
		s.Drivers = append(s.Drivers, *d)
	}
	sort.Slice(s.Drivers, func(i, j int) bool {
		a, b := s.Drivers[i], s.Drivers[j]
		ha, hb := max(a.ISR.Highest, a.DPC.Highest), max(b.ISR.Highest, b.DPC.Highest)
		if ha != hb {
			return ha > hb
		}
		if ta, tb := a.ISR.Total+a.DPC.Total, b.ISR.Total+b.DPC.Total; ta != tb {
			return ta > tb
		}
		return a.Image < b.Image
	})
	return s, nil
}
