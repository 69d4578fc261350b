package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/sweep"
)

// SlackBench is the result of the Linux bench, and of `analyze` on its file.
type SlackBench struct {
	OS      string `json:"os"`
	OSBuild string `json:"os_build"`
	Method  string `json:"method"`
	DelayNs int64  `json:"delay_ns"`
	Samples int    `json:"samples"`
	// Load is the load the sweep ran under (--load); absent for none.
	Load    *Load              `json:"load,omitempty"`
	Result  *sweep.SlackResult `json:"result"`
	RawFile string             `json:"raw_file,omitempty"`
}

// SlackBenchOf is a Linux bench's result for rendering: the facts of its
// raw file and the judgement of it (sweep.JudgeSlackFile); bench and
// analyze both build it here.
func SlackBenchOf(f *rawfile.File, judged *sweep.SlackResult) *SlackBench {
	b := &SlackBench{OS: f.Query.OS, OSBuild: OSBuild(f.Query), Method: f.Method, DelayNs: f.DelayNs, Load: LoadOf(f), Result: judged}
	if f.Bench != nil {
		b.Samples = f.Bench.Samples
	}
	return b
}

// WriteSlackBench renders the Linux bench.
func WriteSlackBench(w io.Writer, b *SlackBench) {
	p := newPrinter(w, "")
	r := b.Result
	title := "tickscope bench: timer slack for a " + Delay(b.DelayNs) + " " + b.Method + " wait"
	if r.Partial {
		title += " (stopped early: the result covers the settings measured)"
	}
	p.line(title)
	p.line("")
	p.kv("kernel", b.OSBuild)
	p.kv("design", fmt.Sprintf("%d settings, %d samples each, in interleaved chunks", len(r.Rows), b.Samples))
	writeLoad(p, b.Load)
	if nr := r.NotRunning; nr != nil {
		p.kv("not running", nr.Sentence())
	}
	p.line("")
	p.line("settings  (lateness p50 / p99, interference)")
	for i, row := range r.Rows {
		dominated := ""
		if row.DominatedBy != nil {
			dominated = r.Rows[*row.DominatedBy].Setting.String() + " has a lower p50 beyond the noise and a lower p99"
		}
		mark := candidateMark(i == r.Recommended, row.Equivalent, row.P50VsBest, dominated, row.Pass)
		p.line(fmt.Sprintf("  %-36s %11s / %-11s %5.1f %%%s", row.Setting, fmtSigned(row.Lateness.P50), fmtSigned(row.Lateness.P99), 100*row.Summary.Interference, mark))
	}
	equivalent := 0
	for _, row := range r.Rows {
		if row.Equivalent {
			equivalent++
		}
	}
	if equivalent > 1 {
		p.line(fmt.Sprintf("  %d settings equivalent: each one's p50 minus the lowest has a 95 %% interval reaching below %s (%.0f %% of that p50's lateness), so none is noticeably slower; the lowest p99 (within %.0f %% of its lateness), then the least interference, then the least intrusive (no DMA hold, the largest slack) chose",
			equivalent, Delay(int64(math.Round(r.NoticeableNs))), 100*sweep.NoticeableLatenessShare, 100*sweep.NoticeableLatenessShare))
	}
	p.line("")
	p.line("result")
	if r.Recommended < 0 {
		p.kv("recommend", "nothing: no setting passes the gates (interference <= 2 %, p95 <= 2.5 ms)")
		return
	}
	row := r.Rows[r.Recommended]
	p.kv("recommend", row.Setting.String())
	if r.FellBack {
		p.kv("", fmt.Sprintf("nothing met the p99 lateness budget of %v: this is the latency pick", time.Duration(r.Preferences.BudgetLateness)))
	}
	s := row.Summary
	p.kv("latency", fmt.Sprintf("min %s   p50 %s   p95 %s   max %s ms", ms(s.Min), ms(s.P50), ms(s.P95), ms(s.Max)))
	p.kv("lateness", fmt.Sprintf("p50 %s   p99 %s", fmtSigned(row.Lateness.P50), fmtSigned(row.Lateness.P99)))
	if c := r.Confidence; c != nil {
		runnerUp := "none: no other setting passes the gates"
		if c.RunnerUp >= 0 {
			runnerUp = r.Rows[c.RunnerUp].Setting.String()
		}
		writeConfidence(p, c, scale{originNs: float64(b.DelayNs), lateness: true}, runnerUp)
	}
	p.kv("stability", r.Stability)
	var next []string
	next = append(next, fmt.Sprintf("tickscope run --slack %v -- PROGRAM", time.Duration(row.Setting.SlackNs)))
	if row.Setting.CPUDMALatencyUs != nil {
		next = append(next, fmt.Sprintf("tickscope apply --dma-latency %d", *row.Setting.CPUDMALatencyUs))
	}
	p.kv("next step", strings.Join(next, "   and   "))
	if b.RawFile != "" {
		p.line("")
		p.line("raw samples written to " + b.RawFile)
	}
}
