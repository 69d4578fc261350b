package report

import (
	"fmt"
	"io"
	"slices"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/stats"
)

// Curve is the result of `tickscope curve`: the overshoot of waits of
// increasing delay, and the tick its sawtooth implies.
type Curve struct {
	Simulated string        `json:"simulated,omitempty"`
	OS        string        `json:"os"`
	OSBuild   string        `json:"os_build"`
	Method    string        `json:"method"`
	Points    []CurvePoint  `json:"points"`
	Tick      stats.TickFit `json:"tick"`
	Partial   bool          `json:"partial"`
	RawFile   string        `json:"raw_file,omitempty"`
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

// CurveOf summarises a curve's raw file. The tick is fitted to each
// delay's median overshoot, not its mean: waits stalled by the machine (a
// preemption of a few ms) move a mean of a few waits enough for a sawtooth
// to "explain" them (TestCurveIgnoresStalledWaits).
func CurveOf(f *rawfile.File) *Curve {
	c := &Curve{Simulated: f.Simulated, OS: f.Query.OS, OSBuild: OSBuild(f.Query), Method: f.Method}
	var delays, medians []float64
	for _, p := range f.Points {
		delay := p.DelayNs
		if delay == 0 {
			delay = f.DelayNs
		}
		sorted := slices.Clone(p.Latencies)
		slices.Sort(sorted)
		s := stats.SummarizeSorted(sorted)
		point := CurvePoint{DelayNs: delay, Samples: s.Count, MeanOvershoot: s.Mean - float64(delay), P50Overshoot: s.P50 - delay, P95Overshoot: s.P95 - delay}
		c.Points = append(c.Points, point)
		c.Partial = c.Partial || p.Stopped
		delays = append(delays, float64(delay))
		medians = append(medians, float64(point.P50Overshoot))
	}
	c.Tick = stats.FitTick(delays, medians, minTickNs, min(maxTickNs, int64(slices.Max(delays))))
	return c
}

// WriteCurve renders the curve as a chart of mean overshoot per delay.
func WriteCurve(w io.Writer, c *Curve) {
	p := newPrinter(w, c.Simulated)
	title := "tickscope curve: " + c.Method + ", overshoot (latency - delay) against the delay"
	if c.Partial {
		title += " (stopped early: the curve covers the delays measured)"
	}
	p.line(title)
	p.line("")
	most := 1.0
	for _, pt := range c.Points {
		most = max(most, pt.MeanOvershoot)
	}
	p.line(fmt.Sprintf("  %9s  %-40s %10s %10s", "delay", "mean overshoot", "mean", "p95"))
	for _, pt := range c.Points {
		cells := int(max(pt.MeanOvershoot, 0) / most * 40 * 8)
		p.line(fmt.Sprintf("  %9s  %-40s %10s %10s", fmtDuration(pt.DelayNs), bar(max(cells, 0), 40*8, 40), fmtSigned(int64(pt.MeanOvershoot)), fmtSigned(pt.P95Overshoot)))
	}
	p.line("")
	if c.Tick.TickNs != 0 {
		p.kv("tick", fmt.Sprintf("about %.2f ms, implied by the sawtooth (it explains %.0f %% of the overshoot's variance)", float64(c.Tick.TickNs)/1e6, 100*c.Tick.Explained))
	} else {
		p.kv("tick", "none visible: the overshoot does not follow a sawtooth (high-resolution timers, or a tick no longer than --step)")
	}
	if c.RawFile != "" {
		p.line("")
		p.line("raw samples written to " + c.RawFile)
	}
}
