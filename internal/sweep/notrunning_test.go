package sweep_test

import (
	"context"
	"testing"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/sweep"
)

// SIMULATED: a bench on a machine suspended for 3 s in the middle of the
// sweep marks the one wait across the suspend in the point its chunk was
// merged into (the chunk's index moved past the samples before it), and the judgement leaves it out of that row and counts
// it: no row shows the suspend as its latency.
func TestBenchLeavesOutASuspend(t *testing.T) {
	h, err := sim.NewHost("suspended", 1)
	if err != nil {
		t.Fatal(err)
	}
	sc := h.Scenario()
	prefs := sweep.DefaultPreferences()
	r := &sweep.Runner{Host: h, Plan: sweep.Plan{Samples: 200, Seed: 1, Prefs: prefs}}
	points, err := r.Run(context.Background(), sweep.Grid(sc.Finest, sc.Coarsest, sc.Finest, sc.Coarsest))
	if err != nil {
		t.Fatal(err)
	}
	marked := 0
	for i, p := range points {
		if p.NotRunning == nil {
			continue
		}
		for _, j := range p.NotRunning.Samples {
			if j >= len(p.Latencies) || p.Latencies[j] < sc.SuspendForNs {
				t.Errorf("point %d marks sample %d of %d, which is not the suspended wait", i, j, len(p.Latencies))
			}
			marked++
		}
	}
	if marked != 1 {
		t.Errorf("%d samples marked, want the one wait across the suspend", marked)
	}
	res := sweep.Judge(points, prefs, 200, 0)
	if nr := res.NotRunning; nr == nil || nr.LeftOut != 1 || nr.SuspendedNs != sc.SuspendForNs {
		t.Errorf("result's not running %+v, want 1 left out of a 3 s suspend", nr)
	}
	rows := 0
	for _, row := range res.Rows {
		if row.Summary.Max >= sc.SuspendForNs {
			t.Errorf("row %d shows the suspend: max %d ns", row.Requested, row.Summary.Max)
		}
		rows += row.NotRunning
	}
	if rows != 1 {
		t.Errorf("rows count %d samples left out, want 1", rows)
	}
	if res.Recommended < 0 {
		t.Error("nothing recommended")
	}
}

// A bench row stopped for 3 s is judged on the samples taken while the
// process ran: the stop is not its maximum, and the row stays confirmed
// (the sample was taken) and passes on the others.
func TestJudgeLeavesOutMarkedSamples(t *testing.T) {
	p := sweepPoint(5023, 1_004_000, 200, 0, 0)
	p.Latencies[17] = 3_026_000_000
	p.NotRunning = &rawfile.NotRunning{Samples: []int{17}, Continued: 1}
	res := sweep.Judge([]rawfile.Point{p}, sweep.DefaultPreferences(), 200, 0)
	row := res.Rows[0]
	if row.Summary.Max >= 3e9 || row.Summary.Count != 199 || !row.Confirmed || row.NotRunning != 1 {
		t.Errorf("row: max %d, %d samples, confirmed %v, not running %d; want the stop left out of 199 judged, confirmed", row.Summary.Max, row.Summary.Count, row.Confirmed, row.NotRunning)
	}
	if !row.Pass {
		t.Error("the row fails with the stop left out")
	}
}
