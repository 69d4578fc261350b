package htmlreport

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/tickscope/tickscope/internal/report"
)

// curve draws the overshoot of each delay and, when the curve found a
// tick, the sawtooth T·⌈d/T⌉ − d that tick implies, lifted by the median
// of the overshoots' distance to it (the fit's constant).
func (p *page) curve(cv *report.Curve) {
	if len(cv.Points) == 0 {
		p.body.WriteString("<p>The curve measured no delay.</p>\n")
		return
	}
	lo, hi := msOf(cv.Points[0].DelayNs), msOf(cv.Points[0].DelayNs)
	var top, bottom float64
	for _, pt := range cv.Points {
		lo, hi = math.Min(lo, msOf(pt.DelayNs)), math.Max(hi, msOf(pt.DelayNs))
		top = math.Max(top, msOf(pt.P95Overshoot))
		bottom = math.Min(bottom, math.Min(msOf(pt.P50Overshoot), pt.MeanOvershoot/1e6))
	}
	tick := float64(cv.Tick.TickNs) / 1e6
	if tick > 0 {
		top = math.Max(top, tick)
	}
	c := newChart("Overshoot against the delay requested", "delay requested (ms)", "overshoot: latency − delay (ms)", lo, hi, bottom, top*1.1, false)
	var xs, p50, p95, mean []float64
	for _, pt := range cv.Points {
		xs = append(xs, msOf(pt.DelayNs))
		p50 = append(p50, msOf(pt.P50Overshoot))
		p95 = append(p95, msOf(pt.P95Overshoot))
		mean = append(mean, pt.MeanOvershoot/1e6)
	}
	c.band(xs, p50, p95, "#2a6fb0")
	c.polyline(xs, p50, "#124", 2)
	for i := range xs {
		c.dot(xs[i], mean[i], 2.5, "#f80", fmt.Sprintf("%.3f ms: mean overshoot %.3f ms", xs[i], mean[i]))
	}
	if tick > 0 {
		saw := func(d float64) float64 { return tick*math.Ceil(d/tick-1e-9) - d }
		var diffs []float64
		for i := range xs {
			diffs = append(diffs, p50[i]-saw(xs[i]))
		}
		slices.Sort(diffs)
		offset := diffs[len(diffs)/2]
		var sx, sy []float64
		steps := 600
		for i := 0; i <= steps; i++ {
			d := lo + (hi-lo)*float64(i)/float64(steps)
			sx, sy = append(sx, d), append(sy, saw(d)+offset)
		}
		c.polyline(sx, sy, "#c0c", 1.5)
		c.legend("p50", "#124", "p50–p95", "#8ab", "mean", "#f80", fmt.Sprintf("fitted tick %.3f ms", tick), "#c0c")
	} else {
		c.legend("p50", "#124", "p50–p95", "#8ab", "mean", "#f80")
	}
	var rows [][]string
	for _, pt := range cv.Points {
		rows = append(rows, []string{fms(pt.DelayNs), strconv.Itoa(pt.Samples), fms(pt.P50Overshoot), fms(pt.P95Overshoot), fmt.Sprintf("%.3f", pt.MeanOvershoot/1e6)})
	}
	note := "<p>No tick: the overshoots show no sawtooth.</p>"
	if tick > 0 {
		note = fmt.Sprintf("<p>Fitted tick %.3f ms, explaining %s of the variance.</p>", tick, pct(cv.Tick.Explained))
	}
	p.figure("Curve", note+table([]string{"delay ms", "samples", "p50 overshoot ms", "p95 overshoot ms", "mean overshoot ms"}, rows), c)
}

// compare draws the method × setting matrix as a heat map of p99 (the
// highest percentile the compare result keeps per cell), the early
// (catch-up) shares written in the cells that have any.
func (p *page) compare(cm *report.Compare) {
	nm, ns := len(cm.Methods), len(cm.Settings)
	if nm == 0 || ns == 0 || len(cm.Cells) == 0 {
		p.body.WriteString("<p>The compare measured no cell.</p>\n")
		return
	}
	var lo, hi int64 = math.MaxInt64, 0
	for _, cell := range cm.Cells {
		if cell.Count > 0 {
			lo, hi = min(lo, cell.P99), max(hi, cell.P99)
		}
	}
	// The heat map has categorical axes: its own labels instead of
	// numeric ticks, the methods' names in the room on its left.
	c := newChartOpts(chartOpts{title: "p99 interval by method (rows) and setting (columns), ms; early share marked",
		xLabel: fmt.Sprintf("colour: p99 interval (ms), %s light to %s dark; ▼ early (catch-up) share", fms(lo), fms(hi)),
		x0:     0, x1: float64(ns), y0: 0, y1: float64(nm), height: max(120, 44*float64(nm)), left: 150})
	c.b.Reset()
	fmt.Fprintf(&c.b, `<rect x="0" y="0" width="100%%" height="%g" fill="#fff" stroke="#444"/>`, c.h)
	ch := c.h / float64(nm)
	for i, cell := range cm.Cells {
		m, s := i/ns, i%ns
		if m >= nm {
			break
		}
		color := "#eee"
		if cell.Count > 0 {
			color = heat(cell.P99, lo, hi)
		}
		y := float64(m) * ch
		fmt.Fprintf(&c.data, `<rect x="%s" y="%.1f" width="%s" height="%.1f" fill="%s" stroke="#fff"><title>%s</title></rect>`, c.px(float64(s)), y, pc(1/float64(ns)), ch, color, esc(fmt.Sprintf("%s / %s: p99 %s ms, early %s", cell.Method, cell.Setting, fms(cell.P99), pct(cell.Early))))
		label := fms(cell.P99)
		if cell.Early > 0 {
			label += fmt.Sprintf(" ▼%s", pct(cell.Early))
		}
		fmt.Fprintf(&c.data, `<text x="%s" y="%.1f" class="tx">%s</text>`, c.px(float64(s)+0.5), y+ch/2+4, esc(label))
	}
	for m, name := range cm.Methods {
		fmt.Fprintf(&c.b, `<text x="-6" y="%.1f" class="ty">%s</text>`, (float64(m)+0.5)*ch+4, esc(name))
	}
	for s, name := range cm.Settings {
		fmt.Fprintf(&c.b, `<text x="%s" y="%.1f" class="tx">%s</text>`, c.px(float64(s)+0.5), c.h+16, esc(name))
	}
	var rows [][]string
	for _, cell := range cm.Cells {
		rows = append(rows, []string{cell.Method, cell.Setting, cell.Granted, strconv.Itoa(cell.Count), fms(cell.P50), fms(cell.P95), fms(cell.P99), fms(cell.Max), pct(cell.Long), pct(cell.Early), fms(cell.DriftNs), fmt.Sprintf("%.3f", cell.CPU)})
	}
	note := fmt.Sprintf("<p>Target interval %s ms. %s</p>", fms(cm.IntervalNs), esc(cm.Verdict))
	p.figure("Compare", note+table([]string{"method", "setting", "granted", "intervals", "p50 ms", "p95 ms", "p99 ms", "max ms", "long", "early", "drift ms", "CPU"}, rows), c)
}

// heat maps v in [lo, hi] from light yellow to dark red.
func heat(v, lo, hi int64) string {
	f := 0.0
	if hi > lo {
		f = float64(v-lo) / float64(hi-lo)
	}
	r := 255 - int(f*90)
	g := 240 - int(f*200)
	b := 170 - int(f*150)
	return fmt.Sprintf("#%02x%02x%02x", r, g, b)
}
