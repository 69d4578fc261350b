package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/sweep"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// Bench is the result of `tickscope bench` and of `tickscope analyze` on a
// bench's raw file.
type Bench struct {
	Simulated string `json:"simulated,omitempty"`
	OS        string `json:"os"`
	OSBuild   string `json:"os_build"`
	// The OS's range and the period in force before the sweep.
	Finest100ns   uint32 `json:"finest_100ns"`
	Coarsest100ns uint32 `json:"coarsest_100ns"`
	Current100ns  uint32 `json:"current_100ns"`
	// Design is "adaptive" or "exhaustive"; Samples the full count per point.
	Design   string `json:"design"`
	Samples  int    `json:"samples"`
	Requests int    `json:"requests"`
	// Load is the load the sweep ran under (--load); absent for none.
	Load    *Load         `json:"load,omitempty"`
	Result  *sweep.Result `json:"result"`
	RawFile string        `json:"raw_file,omitempty"`
}

// WriteBench renders a bench result; rows adds every measured row.
func WriteBench(w io.Writer, b *Bench, rows bool) {
	p := newPrinter(w, b.Simulated)
	r := b.Result
	title := "tickscope bench"
	if r.Partial {
		title += " (stopped early: the result covers the points measured)"
	}
	p.line(title)
	p.line("")
	p.kv("range", fmt.Sprintf("%s - %s ms", timerinfo.FormatPeriodMS(b.Finest100ns), timerinfo.FormatPeriodMS(b.Coarsest100ns)))
	p.kv("current", timerinfo.FormatPeriodMS(b.Current100ns)+" ms before the sweep")
	p.kv("design", fmt.Sprintf("%s, up to %d samples a point; %d requests, %d distinct granted periods", b.Design, b.Samples, b.Requests, len(r.Rows)))
	writeLoad(p, b.Load)
	if r.HeldElsewhere != 0 {
		p.kv("held", fmt.Sprintf("another process holds %s ms: coarser candidates measured that period, not their own, and are marked affected", timerinfo.FormatPeriodMS(r.HeldElsewhere)))
		p.kv("", sweep.HeldElsewhereAdvice)
	}
	if d := r.Discarded; d != nil {
		p.kv("discarded", discardedLine(d, b.Current100ns))
	}
	if nr := r.NotRunning; nr != nil {
		p.kv("not running", nr.Sentence())
	}
	p.line("")
	p.line("curve  (median p50 per band of equivalent periods)")
	for i, band := range r.Bands {
		dominated := ""
		if band.DominatedBy != nil {
			dominated = "the " + bandName(r.Bands[*band.DominatedBy]) + " band's p50 is lower beyond the noise and its p99 lower"
		}
		mark := candidateMark(i == r.Band, band.Equivalent, band.P50VsBest, dominated, band.Pass)
		if mark == "" && !band.Confirmed(r.Rows) {
			mark = "  (first look only)"
		}
		p.line(fmt.Sprintf("  %s - %s ms   p50 %s ms  %4d points%s", timerinfo.FormatPeriodMS(band.LoGranted), timerinfo.FormatPeriodMS(band.HiGranted), ms(band.P50), len(band.Rows), mark))
	}
	if n := countAffected(r); n > 0 {
		p.line(fmt.Sprintf("  %d points affected by the period held elsewhere (not judged)", n))
	}
	if n := countEquivalent(r); n > 1 {
		p.line(fmt.Sprintf("  %d bands equivalent: each one's p50 minus the lowest has a 95 %% interval reaching below %s (%.0f %% of that p50), so none is noticeably slower; the lowest p99 (within %.0f %%), then the fewest waits a tick late, then the coarsest period chose",
			n, Delay(int64(math.Round(r.NoticeableNs))), 100*sweep.NoticeableLatencyShare, 100*sweep.NoticeableLatencyShare))
	}
	if rows {
		p.line("")
		p.line("rows  (requested, granted, same-grant requests, p50 / p95 / p99 ms, interference, stalls, over p50 by 0.25 ms)")
		for _, row := range r.Rows {
			flag := ""
			switch {
			case row.Affected:
				flag = " affected"
			case !row.Pass:
				flag = " fails a gate"
			}
			p.line(fmt.Sprintf("  %6d  %6d  +%-2d  %s / %s / %s  %5.1f %%  %5.1f %%  %5.1f %%  n=%d%s", row.Requested, row.Granted, len(row.SameAs),
				ms(row.Summary.P50), ms(row.Summary.P95), ms(row.Summary.P99), 100*row.Summary.Interference, 100*row.StallShare, 100*row.TailShare,
				row.Summary.Count, flag))
		}
	}
	p.line("")
	p.line("result")
	if r.Recommended < 0 {
		p.kv("recommend", "nothing: no band passes the gates (p50 >= 0.99 ms, p95 <= 2.5 ms, stalls over 1 ms and a tick not significantly over 2 %, waits over p50 by 0.25 ms not significantly over 5 %)")
		return
	}
	row := r.Rows[r.Recommended]
	band := r.Bands[r.Band]
	p.kv("recommend", fmt.Sprintf("%s ms  (%d x 100ns)", timerinfo.FormatPeriodMS(row.Requested), row.Requested))
	if r.FellBack {
		p.kv("", "nothing met the power budget: this is the latency pick")
	}
	p.kv("band", fmt.Sprintf("%s - %s ms  (%d values, all equivalent)", timerinfo.FormatPeriodMS(band.LoGranted), timerinfo.FormatPeriodMS(band.HiGranted), len(band.Rows)))
	s := row.Summary
	p.kv("latency", fmt.Sprintf("min %s   p50 %s   p95 %s   max %s ms", ms(s.Min), ms(s.P50), ms(s.P95), ms(s.Max)))
	if c := r.Confidence; c != nil {
		runnerUp := "none: no other band passes the gates with the full sample count"
		if c.RunnerUp >= 0 {
			runnerUp = fmt.Sprintf("%s ms, the middle of the %s band", timerinfo.FormatPeriodMS(r.Rows[c.RunnerUp].Requested), bandName(r.Bands[bandOf(r, c.RunnerUp)]))
		}
		writeConfidence(p, c, scale{}, runnerUp)
	}
	if r.Floor >= 0 {
		p.kv("vs floor", vsFloor(r))
	}
	p.kv("stability", r.Stability)
	p.kv("next step", fmt.Sprintf("tickscope apply --resolution %d", row.Requested))
	if b.RawFile != "" {
		p.line("")
		p.line("raw samples written to " + b.RawFile)
	}
}

// discardedLine says what Dawson's rule left out: the points measured while
// the timer period was not the one the sweep began with.
func discardedLine(d *sweep.Discards, before uint32) string {
	seen := make([]string, len(d.PeriodsSeen))
	for i, period := range d.PeriodsSeen {
		seen[i] = timerinfo.FormatPeriodMS(period)
	}
	what := "the timer period changed"
	if before != 0 {
		what = "the timer period was not the " + timerinfo.FormatPeriodMS(before) + " ms the sweep began with"
	}
	return fmt.Sprintf("%d points (%d samples) measured while %s (seen %s ms): evidence for no band, left out",
		d.Points, d.Samples, what, strings.Join(seen, ", "))
}

// bandName names a band by its granted periods.
func bandName(b sweep.Band) string {
	return timerinfo.FormatPeriodMS(b.LoGranted) + " - " + timerinfo.FormatPeriodMS(b.HiGranted) + " ms"
}

// bandOf is the index of the band holding row i.
func bandOf(r *sweep.Result, i int) int {
	for b, band := range r.Bands {
		if slices.Contains(band.Rows, i) {
			return b
		}
	}
	return -1
}

func countEquivalent(r *sweep.Result) int {
	n := 0
	for _, band := range r.Bands {
		if band.Equivalent {
			n++
		}
	}
	return n
}

func countAffected(r *sweep.Result) int {
	n := 0
	for _, row := range r.Rows {
		if row.Affected {
			n++
		}
	}
	return n
}

// vsFloor compares the recommendation with the floor, the finest period
// measured: a floor inside the recommended band is one of its equivalent
// values, and a power pick may be slower than the floor.
func vsFloor(r *sweep.Result) string {
	floor := r.Rows[r.Floor]
	line := fmt.Sprintf("p50 %s ms at %s ms", ms(floor.Summary.P50), timerinfo.FormatPeriodMS(floor.Requested))
	if slices.Contains(r.Bands[r.Band].Rows, r.Floor) {
		return line + "  (the floor is inside the recommended band)"
	}
	lower := math.Round(100 * float64(floor.Summary.P50-r.Rows[r.Recommended].Summary.P50) / float64(floor.Summary.P50))
	switch {
	case lower > 0:
		return line + fmt.Sprintf("  (%.0f%% lower)", lower)
	case lower < 0:
		return line + fmt.Sprintf("  (%.0f%% higher)", -lower)
	}
	return line + "  (the same p50)"
}

// BenchOf is a bench's result for rendering: the facts of its raw file and
// the judgement of it (sweep.JudgeFile). bench and analyze both build it
// here, so analysing the file a bench wrote gives exactly the bench's
// result.
func BenchOf(f *rawfile.File, judged *sweep.Result) *Bench {
	b := &Bench{
		Simulated: f.Simulated,
		OS:        f.Query.OS,
		OSBuild:   OSBuild(f.Query),
		Design:    "adaptive",
		Load:      LoadOf(f),
		Result:    judged,
	}
	if win := f.Query.Windows; win != nil {
		b.Finest100ns, b.Coarsest100ns, b.Current100ns = win.Finest100ns, win.Coarsest100ns, win.Current100ns
	}
	if f.Bench != nil {
		b.Samples, b.Requests = f.Bench.Samples, f.Bench.Requests
		if f.Bench.Exhaustive {
			b.Design = "exhaustive"
		}
	}
	return b
}
