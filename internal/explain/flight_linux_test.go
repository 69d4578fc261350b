package explain

import (
	"context"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/platform"
	"github.com/tickscope/tickscope/internal/testlock"
)

// A flight-recorded capture on this machine, as root: with every wait
// late (--over 1ns) the late waits are attributed from the pages kept;
// with none late (--over 10s) it keeps only the ring's few pages of each
// CPU of all it read. What it keeps is bounded by what it read, and a
// wait it did not cover is one it did not attribute.
func TestFlightRecorderCapture(t *testing.T) {
	testlock.Tracefs(t)
	sys := NewSystem()
	if ok, why := sys.CanTrace(); !ok {
		t.Skip(why)
	}
	host := platform.New()
	q, err := host.Query()
	if err != nil {
		t.Fatal(err)
	}
	run := func(over time.Duration) *Result {
		t.Helper()
		res, _, err := Run(context.Background(), host, q, sys, Options{Delay: time.Millisecond, Samples: 600, Over: over, Layer: Layer1, Worst: 10, FlightRecorder: true}, Reporting{})
		if err != nil {
			t.Fatal(err)
		}
		f := res.Trace.Flight
		if f == nil || f.PagesRead < 1 || f.PagesKept > f.PeakPages || f.PeakPages > f.PagesRead || f.PageBytes < 4096 || !res.Trace.Removed {
			t.Fatalf("--over %s: trace %+v, flight recorder %+v", over, res.Trace, f)
		}
		t.Logf("--over %s: %d late waits; pages read %d, kept %d, at most %d held; %d not covered, %d lost events",
			over, len(res.Late), f.PagesRead, f.PagesKept, f.PeakPages, f.NotCovered, res.Trace.Lost)
		return res
	}
	all := run(time.Nanosecond)
	attributed := 0
	for _, l := range all.Late {
		if !l.NotAttributed {
			attributed++
		}
	}
	if len(all.Late) != 600 || attributed < len(all.Late)/2 || all.Trace.Flight.NotCovered > len(all.Late)-attributed {
		t.Errorf("every wait late: %d late, %d attributed, %d not covered", len(all.Late), attributed, all.Trace.Flight.NotCovered)
	}
	none := run(MaxOver)
	f := none.Trace.Flight
	if len(none.Late) != 0 || f.NotCovered != 0 || f.PagesKept > 8*q.CPUs || f.PagesKept >= f.PagesRead {
		t.Errorf("no wait late: %d late; kept %d of %d pages read on %d CPUs, want at most 8 a CPU", len(none.Late), f.PagesKept, f.PagesRead, q.CPUs)
	}
}

// Once a drain has taken the waits queued, queueing as many again
// allocates nothing: Waited runs on the measuring thread, between waits.
func TestWaitedAllocatesNothingAfterADrain(t *testing.T) {
	tr := &linuxTrace{}
	tr.fr = newFlightRecorder(MaxExplained, &tr.loss)
	cycle := func() {
		for i := range 100 {
			tr.Waited(i, int64(i), int64(i+1), 0, false)
		}
		tr.drain()
	}
	cycle()
	cycle()
	if n := testing.AllocsPerRun(20, cycle); n != 0 {
		t.Errorf("%v allocations a drain's 100 waits, want 0", n)
	}
}
