package sweep

import (
	"slices"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/stats"
)

// CurveResult is the judgement of a curve file: the overshoot of waits of
// increasing delay, and the tick its sawtooth implies.
type CurveResult struct {
	Points  []CurvePoint
	Tick    stats.TickFit
	Partial bool
	// NotRunning is what the curve saw of the process not running; its
	// samples are left out of every point's figures.
	NotRunning *NotRunning
}

// CurvePoint is one delay's overshoot (latency − delay).
type CurvePoint struct {
	DelayNs       int64   `json:"delay_ns"`
	Samples       int     `json:"samples"`
	MeanOvershoot float64 `json:"mean_overshoot_ns"`
	P50Overshoot  int64   `json:"p50_overshoot_ns"`
	P95Overshoot  int64   `json:"p95_overshoot_ns"`
}

// Tick search bounds: finer than any Windows period, coarser than its
// default 15.625 ms by a wide margin.
const (
	minTickNs = 500_000
	maxTickNs = 50_000_000
)

// JudgeCurve judges a curve raw file: the command and analyze both judge
// through it. The tick is fitted to each delay's median overshoot, not its
// mean: waits stalled by the machine (a preemption of a few ms) move a mean
// of a few waits enough for a sawtooth to "explain" them
// (TestCurveIgnoresStalledWaits). The samples taken while the process was
// not running are left out: their overshoot is not the timer's.
func JudgeCurve(f *rawfile.File) *CurveResult {
	c := &CurveResult{NotRunning: NotRunningOf(f.Points)}
	var delays, medians []float64
	for i := range f.Points {
		p := &f.Points[i]
		delay := p.DelayNs
		if delay == 0 {
			delay = f.DelayNs
		}
		sorted := slices.Clone(p.Running())
		slices.Sort(sorted)
		s := stats.SummarizeSorted(sorted)
		point := CurvePoint{DelayNs: delay, Samples: s.Count, MeanOvershoot: s.Mean - float64(delay), P50Overshoot: s.P50 - delay, P95Overshoot: s.P95 - delay}
		c.Points = append(c.Points, point)
		c.Partial = c.Partial || p.Stopped
		delays = append(delays, float64(delay))
		medians = append(medians, float64(point.P50Overshoot))
	}
	if len(delays) > 0 {
		c.Tick = stats.FitTick(delays, medians, minTickNs, min(maxTickNs, int64(slices.Max(delays))))
	}
	return c
}
