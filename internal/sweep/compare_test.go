package sweep_test

import (
	"fmt"
	"testing"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/sweep"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// The compare judgement: each method's best setting is the one whose p50
// and p95 sit nearest the target, and the verdict the nearest of those
// among methods that use under half a CPU.
func TestJudgeCompare(t *testing.T) {
	const delay = 1_000_000
	cell := func(method string, slack int64, latency int64, cpu float64) rawfile.Point {
		return rawfile.Point{Method: method, Requested: timerinfo.Setting{SlackNs: slack}, Latencies: []int64{latency, latency, latency},
			Conditions: timerinfo.Conditions{WallNs: 1_000_000_000, CPUNs: int64(cpu * 1e9)}}
	}
	f := &rawfile.File{Command: "compare", Method: "(per point)", DelayNs: delay, Query: &timerinfo.Report{OS: "linux", Linux: &timerinfo.Linux{}},
		Points: []rawfile.Point{
			cell("sleepy", 0, 1_100_000, 0.01), cell("sleepy", 1, 1_050_000, 0.01),
			cell("spin", 0, 1_000_100, 0.99), cell("spin", 1, 1_000_050, 0.99),
			cell("hybrid", 0, 1_020_000, 0.2), cell("hybrid", 1, 1_030_000, 0.2),
		}}
	c := sweep.JudgeCompare(f, nil, nil)
	if fmt.Sprint(c.Methods, c.Settings, c.Best) != "[sleepy spin hybrid] [none slack 1ns] [1 1 0]" {
		t.Errorf("methods %v, settings %v, best %v", c.Methods, c.Settings, c.Best)
	}
	// spin is nearest, but keeps a core busy: the verdict is hybrid's.
	if c.Verdict != 4 {
		t.Errorf("verdict cell %d (%+v), want 4, hybrid with no setting", c.Verdict, c.Cells[max(c.Verdict, 0)])
	}
	// A method with no cell measured has no best, and no verdict is left.
	none := sweep.JudgeCompare(f, []string{"absent"}, []string{"none"})
	if fmt.Sprint(none.Best) != "[-1]" || none.Verdict != -1 {
		t.Errorf("nothing measured: best %v, verdict %d", none.Best, none.Verdict)
	}
}

// TestPeriodicIntervalsCountSkippedDeadlines: a periodic wake more than a
// delay late makes the loop skip the deadlines that passed (overruns); the
// next interval spans them. Before, it came out negative.
func TestPeriodicIntervalsCountSkippedDeadlines(t *testing.T) {
	const delay = 1_000_000
	for _, tc := range []struct {
		name      string
		latencies []int64 // delay + lateness past each deadline
		want      []int64
	}{
		{"on time", []int64{delay, delay, delay}, []int64{delay, delay, delay}},
		{"late, no skip", []int64{delay, 1_900_000, delay}, []int64{delay, 1_900_000, 100_000}},
		// 3.5 ms late: deadlines at +1, +2 and +3 ms had passed; the next
		// wake, 0.1 ms late, is 4 ms later in deadlines, 0.6 ms in time.
		{"one wake 3.5 delays late", []int64{delay, 4_500_000, 1_100_000}, []int64{delay, 4_500_000, 600_000}},
		{"exactly one delay late", []int64{2_000_000, delay}, []int64{2_000_000, delay}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &rawfile.File{Command: "compare", Method: "(per point)", DelayNs: delay,
				Query:  &timerinfo.Report{OS: "linux", Linux: &timerinfo.Linux{}},
				Points: []rawfile.Point{{Method: "clock-abs", Periodic: true, Latencies: tc.latencies}}}
			c := sweep.JudgeCompare(f, nil, nil)
			var elapsed int64
			for _, v := range tc.want {
				elapsed += v
			}
			if got, want := c.Cells[0].DriftNs, elapsed-int64(len(tc.want))*delay; got != want {
				t.Errorf("drift %d, want %d (intervals %v)", got, want, tc.want)
			}
			if c.Cells[0].P50 < 0 {
				t.Errorf("a negative interval: p50 %d", c.Cells[0].P50)
			}
		})
	}
}

// A sample taken while the process was not running (a 3 s stop) is no
// interval of the timer's: a relative method's is left out, a periodic
// one's leaves out the two intervals it touches (its lateness is in both:
// the one its wake ends, 3 s long, and the next, which the skipped
// deadlines would make look early), and the matrix says it left it out.
func TestCompareLeavesOutNotRunning(t *testing.T) {
	const delay = 1_000_000
	stopped := int64(3_000_000_000)
	lat := []int64{delay, delay + 10_000, stopped, delay + 20_000, delay + 10_000, delay}
	nr := &rawfile.NotRunning{Samples: []int{2}, Continued: 1}
	f := &rawfile.File{Command: "compare", Method: "(per point)", DelayNs: delay,
		Query: &timerinfo.Report{OS: "linux", Linux: &timerinfo.Linux{}},
		Points: []rawfile.Point{
			{Method: "nanosleep", Latencies: lat, NotRunning: nr},
			{Method: "clock-abs", Periodic: true, Latencies: lat, NotRunning: nr},
		}}
	c := sweep.JudgeCompare(f, nil, nil)
	relative, periodic := c.Cells[0], c.Cells[1]
	if relative.Count != 5 || relative.Max != delay+20_000 || relative.DriftNs != 40_000 || relative.Long != 0 {
		t.Errorf("relative cell %+v, want 5 intervals, max %d, drift 40 µs, none long", relative, delay+20_000)
	}
	// Intervals kept: 1 ms, 1.01 ms, (2 and 3 left out), 0.99 ms, 0.99 ms.
	if periodic.Count != 4 || periodic.Max != delay+10_000 || periodic.DriftNs != -10_000 || periodic.Long != 0 || periodic.Early != 0 {
		t.Errorf("periodic cell %+v, want 4 intervals, max %d, drift -10 µs, none long or early", periodic, delay+10_000)
	}
	if got := c.NotRunning; got == nil || got.LeftOut != 2 || got.Continued != 2 {
		t.Errorf("not running %+v, want the 2 cells' 1 sample each", got)
	}
}
