package htmlreport

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/stats"
	"github.com/tickscope/tickscope/internal/sweep"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

const (
	passColor = "#3a3"
	failColor = "#c33"
)

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func period(v uint32) float64 { return float64(v) / 1e4 } // 100 ns units to ms

// benchView is the part of a Windows bench's range the bench chart shows:
// the band that decides, from the floor to a little past the pick's band
// (the pick is the power band under --prefer power) and any band the
// latency pick weighed as equivalent, so that the knees around the pick
// are spread over the chart's width. zoomed is false when that is most of
// the range anyway: the chart then shows it all, without an overview.
type benchView struct {
	lo, hi float64 // ms
	zoomed bool
}

// viewShare is how much of the whole range a view may cover and still be
// drawn with an overview under it.
const viewShare = 0.6

func viewOf(r *sweep.Result, periods []float64, pos map[int]int) benchView {
	first, last := periods[0], periods[len(periods)-1]
	whole := benchView{lo: first, hi: last}
	start := first
	if r.Floor >= 0 && r.Floor < len(r.Rows) {
		start = period(r.Rows[r.Floor].Requested)
	}
	end := -1.0
	for i, band := range r.Bands {
		if i != r.Band && !band.Equivalent {
			continue
		}
		for _, row := range band.Rows {
			if row >= 0 && row < len(r.Rows) {
				end = max(end, period(r.Rows[row].Requested))
			}
		}
	}
	if end < 0 || end <= start {
		// No pick, or the pick is the floor: the floor's band then.
		for _, band := range r.Bands {
			if slices.ContainsFunc(band.Rows, func(row int) bool { return row == r.Floor }) {
				for _, row := range band.Rows {
					end = max(end, period(r.Rows[row].Requested))
				}
			}
		}
	}
	if end <= start {
		return whole
	}
	// A little past: the next period measured (where the latency changes
	// back, if it does) and a quarter of the span more.
	past := end + (end-start)/4
	if i := slices.IndexFunc(periods, func(v float64) bool { return v > end }); i >= 0 {
		past = max(past, periods[i])
	}
	v := benchView{lo: start, hi: min(past, last), zoomed: true}
	if v.hi-v.lo > viewShare*(last-first) {
		return whole
	}
	return v
}

// bench draws the Windows bench: latency of the wait against the period
// requested, bands of equal periods coloured by the judgement's pass/fail,
// over the band that decides, and the whole range small under it.
func (p *page) bench(b *report.Bench) {
	r := b.Result
	if r == nil || len(r.Rows) == 0 {
		p.body.WriteString("<p>The bench measured no period.</p>\n")
		return
	}
	if r.NotRunning != nil {
		p.warnings([]string{r.NotRunning.Sentence()})
	}
	order := make([]int, len(r.Rows))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, c int) int { return int(r.Rows[a].Requested) - int(r.Rows[c].Requested) })
	periods := make([]float64, len(order))
	pos := make(map[int]int, len(order))
	for k, i := range order {
		periods[k] = period(r.Rows[i].Requested)
		pos[i] = k
	}
	view := viewOf(r, periods, pos)
	c := benchChart(r, order, periods, pos, view)
	charts := []*chart{c}
	if view.zoomed {
		charts = append(charts, benchOverview(r, order, periods, pos, view))
	}
	var rows [][]string
	for _, i := range order {
		row := r.Rows[i]
		mark := ""
		if i == r.Recommended {
			mark = "pick"
		} else if i == r.Floor {
			mark = "floor"
		}
		rows = append(rows, []string{fmtP(row.Requested), fmtP(row.Granted), fms(row.Summary.Min), fms(row.Summary.P50), fms(row.Summary.P95), fms(row.Summary.P99), fms(row.Summary.Max), yes(row.Pass), yes(row.Affected), mark})
	}
	head := []string{"requested ms", "granted ms", "min", "p50", "p95", "p99", "max", "pass", "affected", ""}
	notes := fmt.Sprintf("<p>%s design, %d samples per period; stability: %s. Latencies in ms.</p>", esc(b.Design), b.Samples, esc(r.Stability))
	if r.RecheckWinner != nil {
		notes += fmt.Sprintf("<p>re-check of the pick: p50 %s ms, p99 %s ms</p>", fms(r.RecheckWinner.P50), fms(r.RecheckWinner.P99))
	}
	if r.HeldElsewhere != 0 {
		notes += fmt.Sprintf("<p>Another process held %s ms: the coarser requests measured that period, not their own, and are marked affected; %s.</p>", fmtP(r.HeldElsewhere), esc(sweep.HeldElsewhereAdvice))
	}
	if c := r.Confidence; c != nil {
		runnerUp := ""
		if c.RunnerUp >= 0 && c.RunnerUp < len(r.Rows) {
			runnerUp = fmtP(r.Rows[c.RunnerUp].Requested) + " ms"
		}
		notes += confidenceNote(c, 0, runnerUp)
	}
	p.figure("Bench", notes+table(head, rows), charts...)
}

// edges are where the rows at sorted positions a..b meet their
// neighbours: halfway between periods, so that bands tile the axis.
func edges(periods []float64, a, b int) (float64, float64) {
	half := func(k int) float64 { // half the gap at position k's side
		if len(periods) < 2 {
			return 0.0005
		}
		k = min(max(k, 1), len(periods)-1)
		return (periods[k] - periods[k-1]) / 2
	}
	return periods[a] - half(a), periods[b] + half(b+1)
}

// bandSpan is a band's first and last sorted positions.
func bandSpan(band sweep.Band, pos map[int]int) (int, int) {
	a, b := len(pos), -1
	for _, row := range band.Rows {
		if k, ok := pos[row]; ok {
			a, b = min(a, k), max(b, k)
		}
	}
	return a, b
}

// shadeBands fills each band's stretch of the axis green (pass) or red
// (fail), neighbours in two strengths so that every knee shows; the
// pick's band strongest.
func shadeBands(c *chart, r *sweep.Result, periods []float64, pos map[int]int) {
	for i, band := range r.Bands {
		a, b := bandSpan(band, pos)
		if b < 0 {
			continue
		}
		lo, hi := edges(periods, a, b)
		color, opacity := failColor, 0.10
		if band.Pass {
			color = passColor
		}
		if i%2 == 1 {
			opacity = 0.20
		}
		if i == r.Band {
			opacity = 0.40
		}
		c.rectXY(lo, hi, c.y0, c.y1, color, opacity, fmt.Sprintf("band %s–%s ms granted: p50 %s ms, pass %s", fmtP(band.LoGranted), fmtP(band.HiGranted), fms(band.P50), yes(band.Pass)))
	}
}

// benchChart is the bench's main chart over view.
func benchChart(r *sweep.Result, order []int, periods []float64, pos map[int]int, view benchView) *chart {
	pad := (view.hi - view.lo) * 0.03
	if pad == 0 {
		pad = 0.05
	}
	x0, x1 := view.lo-pad, view.hi+pad
	// The y axis fits the p99s in view (and the re-checks), so that the
	// knees' steps are tall; a max above them is marked on the top edge.
	var top int64
	for k, i := range order {
		if periods[k] >= x0 && periods[k] <= x1 {
			top = max(top, r.Rows[i].Summary.P99)
		}
	}
	for _, s := range []*stats.Summary{r.RecheckWinner, r.RecheckFloor} {
		if s != nil {
			top = max(top, s.P50)
		}
	}
	title := "Wait latency against the period requested"
	if view.zoomed {
		title = fmt.Sprintf("Wait latency against the period requested, %s–%s ms: the band that decides", num3(view.lo), num3(view.hi))
	}
	c := newChartOpts(chartOpts{title: title, xLabel: "timer period requested (ms)", yLabel: "wait latency (ms)", x0: x0, x1: x1, y0: 0, y1: msOf(top) * 1.1})
	shadeBands(c, r, periods, pos)
	var xs, p50, low, p95 []float64
	for k, i := range order {
		row := r.Rows[i]
		// One period each side of the view, so that the lines leave the
		// plot at its edges rather than stop short of them.
		if periods[k] < x0 && k+1 < len(periods) && periods[k+1] < x0 || periods[k] > x1 && k > 0 && periods[k-1] > x1 {
			continue
		}
		xs = append(xs, periods[k])
		p50 = append(p50, msOf(row.Summary.P50))
		low = append(low, msOf(row.Summary.P5))
		p95 = append(p95, msOf(row.Summary.P95))
	}
	c.band(xs, low, p95, "#2a6fb0")
	c.polyline(xs, p50, "#124", 2)
	for _, i := range order {
		row := r.Rows[i]
		c.dot(period(row.Requested), msOf(row.Summary.Max), 3, "#f80", fmt.Sprintf("%s ms: max %s ms", fmtP(row.Requested), fms(row.Summary.Max)))
		c.dot(period(row.Requested), msOf(row.Summary.P50), 2, "#124", fmt.Sprintf("%s ms (granted %s): p50 %s ms", fmtP(row.Requested), fmtP(row.Granted), fms(row.Summary.P50)))
	}
	if r.Floor >= 0 && r.Floor < len(r.Rows) {
		c.vmark(period(r.Rows[r.Floor].Requested), "#555", "floor "+fmtP(r.Rows[r.Floor].Requested)+" ms", 1)
		if r.RecheckFloor != nil {
			c.dot(period(r.Rows[r.Floor].Requested), msOf(r.RecheckFloor.P50), 5, "#808", "re-check of the floor: p50 "+fms(r.RecheckFloor.P50)+" ms")
		}
	}
	if r.Recommended >= 0 && r.Recommended < len(r.Rows) {
		c.vmark(period(r.Rows[r.Recommended].Requested), "#06c", "pick "+fmtP(r.Rows[r.Recommended].Requested)+" ms", 0)
		if r.RecheckWinner != nil {
			c.dot(period(r.Rows[r.Recommended].Requested), msOf(r.RecheckWinner.P50), 5, "#808", "re-check of the pick: p50 "+fms(r.RecheckWinner.P50)+" ms")
		}
	}
	c.legend("p50", "#124", "p5–p95", "#8ab", "max", "#f80", "re-check p50", "#808", "band: pass", "#9d9", "band: fail", "#e99", "the pick's band", "#7c7")
	return c
}

// benchOverview is the whole range, small, with the view's box on it.
func benchOverview(r *sweep.Result, order []int, periods []float64, pos map[int]int, view benchView) *chart {
	lo, hi := periods[0], periods[len(periods)-1]
	pad := (hi - lo) * 0.01
	var top int64
	var xs, p50 []float64
	for k, i := range order {
		top = max(top, r.Rows[i].Summary.P50)
		xs = append(xs, periods[k])
		p50 = append(p50, msOf(r.Rows[i].Summary.P50))
	}
	c := newChartOpts(chartOpts{class: "overview", title: fmt.Sprintf("The whole sweep, %s–%s ms (in blue: the part drawn above)", num3(lo), num3(hi)),
		xLabel: "timer period requested (ms)", yLabel: "p50", x0: lo - pad, x1: hi + pad, y0: 0, y1: msOf(top) * 1.1, height: overviewH})
	shadeBands(c, r, periods, pos)
	c.polyline(xs, p50, "#124", 1.5)
	c.window(view.lo, view.hi, "#06c", fmt.Sprintf("the chart above: %s–%s ms", num3(view.lo), num3(view.hi)))
	return c
}

// num3 prints a period in ms to the 100 ns the OS counts in.
func num3(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }

func fmtP(v uint32) string { return timerinfo.FormatPeriodMS(v) }

// settingName names a Linux bench setting: the slack and the DMA hold.
func settingName(s timerinfo.Setting) string {
	name := "slack " + strconv.FormatInt(s.SlackNs, 10) + " ns"
	if s.CPUDMALatencyUs != nil {
		name += fmt.Sprintf(", DMA hold %d µs", *s.CPUDMALatencyUs)
	}
	return name
}

// slackBench draws the Linux bench: latency against each slack setting,
// with and without the /dev/cpu_dma_latency hold as two series.
func (p *page) slackBench(b *report.SlackBench) {
	r := b.Result
	if r == nil || len(r.Rows) == 0 {
		p.body.WriteString("<p>The bench measured no setting.</p>\n")
		return
	}
	if r.NotRunning != nil {
		p.warnings([]string{r.NotRunning.Sentence()})
	}
	c := slackChart(r, b.DelayNs)
	var rows [][]string
	for i, row := range r.Rows {
		mark := ""
		if i == r.Recommended {
			mark = "pick"
		}
		rows = append(rows, []string{strconv.Itoa(i), settingName(row.Setting), fms(row.Summary.Min), fms(row.Summary.P50), fms(row.Summary.P95), fms(row.Summary.P99), fms(row.Summary.Max), fms(row.Lateness.P99), yes(row.Pass), mark})
	}
	notes := fmt.Sprintf("<p>%s, %s ms delay, %d samples per setting; stability: %s. Latencies in ms.</p>", esc(b.Method), fms(b.DelayNs), b.Samples, esc(strings.TrimSpace(r.Stability)))
	if c := r.Confidence; c != nil {
		runnerUp := ""
		if c.RunnerUp >= 0 && c.RunnerUp < len(r.Rows) {
			runnerUp = settingName(r.Rows[c.RunnerUp].Setting)
		}
		notes += confidenceNote(c, b.DelayNs, runnerUp)
	}
	p.figure("Bench (timer slack)", notes+table([]string{"#", "setting", "min", "p50", "p95", "p99", "max", "lateness p99", "pass", ""}, rows), c)
}

// slackChart draws the Linux bench's lateness (latency past the delay)
// against the slack, both on log axes: the slacks run from 1 ns to 500 µs
// and the lateness from a few µs to a slack's width, each over decades.
// With and without the DMA hold are two series, side by side at each
// slack.
func slackChart(r *sweep.SlackResult, delayNs int64) *chart {
	late := func(ns int64) float64 { return float64(ns-delayNs) / 1e3 } // a latency's lateness, µs
	us := func(ns int64) float64 { return float64(ns) / 1e3 }
	lo, hi := math.Inf(1), 0.0
	sLo, sHi := math.Inf(1), 0.0
	for _, row := range r.Rows {
		lo = math.Min(lo, late(row.Summary.P5))
		hi = math.Max(hi, math.Max(late(row.Summary.P95), us(row.Lateness.P99)))
		sLo, sHi = math.Min(sLo, float64(max(row.Setting.SlackNs, 1))), math.Max(sHi, float64(row.Setting.SlackNs))
	}
	// Whole decades, the lateness at least 0.1 µs (a wait is never early
	// on Linux; a lateness under that is drawn on the bottom edge), up to
	// the highest p99: a max above it is marked on the top edge.
	y0 := math.Pow(10, math.Floor(math.Log10(math.Max(lo, 0.1))))
	y1 := math.Pow(10, math.Ceil(math.Log10(math.Max(hi*1.2, y0*10))))
	x0 := math.Pow(10, math.Floor(math.Log10(sLo))) / 2
	x1 := math.Pow(10, math.Ceil(math.Log10(math.Max(sHi, x0*20)))) * 2
	c := newChartOpts(chartOpts{title: "Lateness of a " + fms(delayNs) + " ms wait against the timer slack (log scales)", xLabel: "timer slack of the measuring thread (log scale)",
		yLabel: "lateness: latency − delay (µs)", x0: x0, x1: x1, y0: y0, y1: y1, logX: true, logY: true, xTickLabel: slackLabel})
	series := map[bool][][2]float64{}
	for i, row := range r.Rows {
		held := row.Setting.CPUDMALatencyUs != nil
		x := float64(max(row.Setting.SlackNs, 1))
		color := failColor
		if row.Pass {
			color = passColor
		}
		dx := -5.0 // the two series side by side
		if held {
			dx = 5
		}
		name := settingName(row.Setting)
		if i == r.Recommended {
			name += " (the pick)"
		}
		c.vbar(x, dx, late(row.Summary.P5), late(row.Summary.P95), 8, color, 0.55, name+": lateness p5–p95 "+fus(late(row.Summary.P5))+" – "+fus(late(row.Summary.P95))+" µs")
		c.vbar(x, dx, us(row.Lateness.P99)*0.97, us(row.Lateness.P99)*1.03, 10, "#000", 1, name+": lateness p99 "+fus(us(row.Lateness.P99))+" µs")
		c.dot(x, late(row.Summary.Max), 3, "#f80", name+": lateness max "+fus(late(row.Summary.Max))+" µs")
		series[held] = append(series[held], [2]float64{x, us(row.Lateness.P50)})
	}
	for _, held := range []bool{false, true} {
		var xs, ys []float64
		for _, pt := range series[held] {
			xs, ys = append(xs, pt[0]), append(ys, pt[1])
		}
		color := "#124"
		if held {
			color = "#a0a"
		}
		c.polyline(xs, ys, color, 2)
		for i := range xs {
			c.dot(xs[i], ys[i], 2.5, color, fmt.Sprintf("p50 lateness %s µs", fus(ys[i])))
		}
	}
	if r.Recommended >= 0 && r.Recommended < len(r.Rows) {
		pick := r.Rows[r.Recommended].Setting
		c.vmark(float64(max(pick.SlackNs, 1)), "#06c", "pick: "+settingName(pick), 0)
	}
	if r.Preferences.Prefer == "power" && r.Preferences.BudgetLateness > 0 {
		c.hmark(float64(r.Preferences.BudgetLateness)/1e3, "#b60", "budget: p99 lateness "+fus(float64(r.Preferences.BudgetLateness)/1e3)+" µs")
	}
	c.legend("p50 without DMA hold", "#124", "p50 with DMA hold (bars right)", "#a0a", "p5–p95: pass", "#9d9", "p5–p95: fail", "#e99", "p99", "#000", "max", "#f80")
	return c
}

// slackLabel names a slack axis tick, a power of ten of ns.
func slackLabel(ns float64) string {
	switch {
	case ns >= 1e6:
		return num(ns/1e6) + " ms"
	case ns >= 1e3:
		return num(ns/1e3) + " µs"
	}
	return num(ns) + " ns"
}

// fus prints µs to a tenth.
func fus(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// confidenceNote is the recommendation's p50 and p99 with their 95 %
// intervals (the Linux bench's in µs past originNs, its delay: lateness),
// and its margin over the runner-up.
func confidenceNote(c *sweep.Confidence, originNs int64, runnerUp string) string {
	o := float64(originNs)
	iv := func(v stats.Interval) string {
		if v.OneSided {
			return fmt.Sprintf("%.4f ms (95 %% one-sided: at least %.4f; %s)", v.Estimate/1e6, v.Lo/1e6, report.OneSidedNote)
		}
		return fmt.Sprintf("%.4f ms (%s %.4f – %.4f)", v.Estimate/1e6, report.CILabel(v), v.Lo/1e6, v.Hi/1e6)
	}
	what := "latency"
	if originNs != 0 {
		what = "lateness"
		iv = func(v stats.Interval) string {
			if v.OneSided {
				return fmt.Sprintf("%+.1f µs (95 %% one-sided: at least %+.1f; %s)", (v.Estimate-o)/1e3, (v.Lo-o)/1e3, report.OneSidedNote)
			}
			return fmt.Sprintf("%+.1f µs (%s %+.1f – %+.1f)", (v.Estimate-o)/1e3, report.CILabel(v), (v.Lo-o)/1e3, (v.Hi-o)/1e3)
		}
	}
	note := fmt.Sprintf("<p>The pick's %s: p50 %s, p99 %s.", what, iv(c.P50), iv(c.P99))
	if c.MarginP50 != nil && c.MarginP99 != nil && runnerUp != "" {
		d := func(v stats.Interval) string {
			if v.Unbounded {
				return fmt.Sprintf("%+.1f µs (%s)", v.Estimate/1e3, report.UnboundedNote)
			}
			return fmt.Sprintf("%+.1f µs (%s %+.1f – %+.1f)", v.Estimate/1e3, report.CILabel(v), v.Lo/1e3, v.Hi/1e3)
		}
		note += fmt.Sprintf(" The runner-up, %s, has a p50 %s and a p99 %s against it.", esc(runnerUp), d(*c.MarginP50), d(*c.MarginP99))
	} else {
		note += " No runner-up qualifies."
	}
	return note + " " + esc(report.MethodOf(c)) + ".</p>"
}
