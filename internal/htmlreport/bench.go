package htmlreport

import (
	"fmt"
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

// bench draws the Windows bench: latency of the wait against the period
// requested, bands of equal periods coloured by the judgement's pass/fail.
func (p *page) bench(b *report.Bench) {
	r := b.Result
	if r == nil || len(r.Rows) == 0 {
		p.body.WriteString("<p>The bench measured no period.</p>\n")
		return
	}
	order := make([]int, len(r.Rows))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, c int) int { return int(r.Rows[a].Requested) - int(r.Rows[c].Requested) })
	lo, hi := period(r.Rows[order[0]].Requested), period(r.Rows[order[len(order)-1]].Requested)
	var top int64
	for _, row := range r.Rows {
		top = max(top, row.Summary.Max)
	}
	pad := max((hi-lo)*0.03, 0.05)
	c := newChart("Wait latency against the period requested", "timer period requested (ms)", "wait latency (ms)", lo-pad, hi+pad, 0, msOf(top)*1.05, false)
	for _, band := range r.Bands {
		bl, bh := hi+pad, lo-pad
		for _, i := range band.Rows {
			bl, bh = min(bl, period(r.Rows[i].Requested)), max(bh, period(r.Rows[i].Requested))
		}
		color := failColor
		if band.Pass {
			color = passColor
		}
		c.rectXY(bl-pad/2, bh+pad/2, 0, msOf(top)*1.05, color, 0.12, fmt.Sprintf("band %s–%s ms granted: pass %s", fmtP(band.LoGranted), fmtP(band.HiGranted), yes(band.Pass)))
	}
	var xs, p50, low, p95 []float64
	for _, i := range order {
		row := r.Rows[i]
		xs = append(xs, period(row.Requested))
		p50 = append(p50, msOf(row.Summary.P50))
		low = append(low, msOf(row.Summary.P5))
		p95 = append(p95, msOf(row.Summary.P95))
	}
	c.band(xs, low, p95, "#2a6fb0")
	c.polyline(xs, p50, "#124", 2)
	for _, i := range order {
		row := r.Rows[i]
		c.dot(period(row.Requested), msOf(row.Summary.Max), 3, "#f80", fmt.Sprintf("%s ms: max %s ms", fmtP(row.Requested), fms(row.Summary.Max)))
	}
	if r.Floor >= 0 && r.Floor < len(r.Rows) {
		c.vmark(period(r.Rows[r.Floor].Requested), "#555", "floor", 1)
		if r.RecheckFloor != nil {
			c.dot(period(r.Rows[r.Floor].Requested), msOf(r.RecheckFloor.P50), 5, "#808", "re-check of the floor: p50 "+fms(r.RecheckFloor.P50)+" ms")
		}
	}
	if r.Recommended >= 0 && r.Recommended < len(r.Rows) {
		c.vmark(period(r.Rows[r.Recommended].Requested), "#06c", "pick", 0)
		if r.RecheckWinner != nil {
			c.dot(period(r.Rows[r.Recommended].Requested), msOf(r.RecheckWinner.P50), 5, "#808", "re-check of the pick: p50 "+fms(r.RecheckWinner.P50)+" ms")
		}
	}
	c.legend("p50", "#124", "p5–p95", "#8ab", "max", "#f80", "re-check p50", "#808", "pass", "#9d9", "fail", "#e99")
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
	p.figure("Bench", c, notes+table(head, rows))
}

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
	var top int64
	for _, row := range r.Rows {
		top = max(top, row.Summary.Max)
	}
	c := newChart("Wait latency against the timer slack", "setting (index; the table names it)", "wait latency (ms)", -0.5, float64(len(r.Rows))-0.5, 0, msOf(top)*1.05, false)
	series := map[bool][]float64{}
	xsOf := map[bool][]float64{}
	for i, row := range r.Rows {
		held := row.Setting.CPUDMALatencyUs != nil
		x := float64(i)
		color := failColor
		if row.Pass {
			color = passColor
		}
		c.rectXY(x-0.4, x+0.4, msOf(row.Summary.P5), msOf(row.Summary.P95), color, 0.35, settingName(row.Setting)+": p5–p95")
		c.dot(x, msOf(row.Summary.Max), 3, "#f80", "max "+fms(row.Summary.Max)+" ms")
		xsOf[held] = append(xsOf[held], x)
		series[held] = append(series[held], msOf(row.Summary.P50))
	}
	c.polyline(xsOf[false], series[false], "#124", 2)
	c.polyline(xsOf[true], series[true], "#a0a", 2)
	if r.Recommended >= 0 {
		c.vmark(float64(r.Recommended), "#06c", "pick", 0)
	}
	c.legend("p50 without DMA hold", "#124", "p50 with DMA hold", "#a0a", "max", "#f80", "pass", "#9d9", "fail", "#e99")
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
	p.figure("Bench (timer slack)", c, notes+table([]string{"#", "setting", "min", "p50", "p95", "p99", "max", "lateness p99", "pass", ""}, rows))
}

// confidenceNote is the recommendation's p50 and p99 with their 95 %
// intervals (the Linux bench's in µs past originNs, its delay: lateness),
// and its margin over the runner-up.
func confidenceNote(c *sweep.Confidence, originNs int64, runnerUp string) string {
	o := float64(originNs)
	iv := func(v stats.Interval) string {
		return fmt.Sprintf("%.4f ms (95 %% CI %.4f – %.4f)", v.Estimate/1e6, v.Lo/1e6, v.Hi/1e6)
	}
	what := "latency"
	if originNs != 0 {
		what = "lateness"
		iv = func(v stats.Interval) string {
			return fmt.Sprintf("%+.1f µs (95 %% CI %+.1f – %+.1f)", (v.Estimate-o)/1e3, (v.Lo-o)/1e3, (v.Hi-o)/1e3)
		}
	}
	note := fmt.Sprintf("<p>The pick's %s: p50 %s, p99 %s.", what, iv(c.P50), iv(c.P99))
	if c.MarginP50 != nil && c.MarginP99 != nil && runnerUp != "" {
		d := func(v stats.Interval) string {
			return fmt.Sprintf("%+.1f µs (95 %% CI %+.1f – %+.1f)", v.Estimate/1e3, v.Lo/1e3, v.Hi/1e3)
		}
		note += fmt.Sprintf(" The runner-up, %s, has a p50 %s and a p99 %s against it.", esc(runnerUp), d(*c.MarginP50), d(*c.MarginP99))
	} else {
		note += " No runner-up qualifies."
	}
	return note + " " + esc(c.Method) + ".</p>"
}
