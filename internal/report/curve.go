package report

import (
	"fmt"
	"io"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/stats"
	"github.com/tickscope/tickscope/internal/sweep"
)

// Curve is the result of `tickscope curve`: the overshoot of waits of
// increasing delay, and the tick its sawtooth implies.
type Curve struct {
	Simulated string             `json:"simulated,omitempty"`
	OS        string             `json:"os"`
	OSBuild   string             `json:"os_build"`
	Method    string             `json:"method"`
	Points    []sweep.CurvePoint `json:"points"`
	Tick      stats.TickFit      `json:"tick"`
	Partial   bool               `json:"partial"`
	// NotRunning is what the curve saw of the process not running: its
	// samples are left out of every point.
	NotRunning *sweep.NotRunning `json:"not_running,omitempty"`
	RawFile    string            `json:"raw_file,omitempty"`
}

// CurveOf is a curve file's result for rendering: the facts of its raw
// file and the judgement of it (sweep.JudgeCurve). curve and analyze both
// build it here.
func CurveOf(f *rawfile.File, judged *sweep.CurveResult) *Curve {
	return &Curve{Simulated: f.Simulated, OS: f.Query.OS, OSBuild: OSBuild(f.Query), Method: f.Method,
		Points: judged.Points, Tick: judged.Tick, Partial: judged.Partial,
		NotRunning: judged.NotRunning}
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
		p.line(fmt.Sprintf("  %9s  %-40s %10s %10s", Delay(pt.DelayNs), Bar(max(cells, 0), 40*8, 40), fmtSigned(int64(pt.MeanOvershoot)), fmtSigned(pt.P95Overshoot)))
	}
	p.line("")
	if c.Tick.TickNs != 0 {
		p.kv("tick", fmt.Sprintf("about %.2f ms, implied by the sawtooth (it explains %.0f %% of the overshoot's variance)", float64(c.Tick.TickNs)/1e6, 100*c.Tick.Explained))
	} else {
		p.kv("tick", "none visible: the overshoot does not follow a sawtooth (high-resolution timers, or a tick no longer than --step)")
	}
	if nr := c.NotRunning; nr != nil {
		p.kv("not running", nr.Sentence())
	}
	if c.RawFile != "" {
		p.line("")
		p.line("raw samples written to " + c.RawFile)
	}
}
