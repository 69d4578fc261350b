package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/sweep"
)

// Compare is the result of `tickscope compare`: every wait method under
// every setting, as intervals of the target.
type Compare struct {
	OS         string   `json:"os"`
	OSBuild    string   `json:"os_build"`
	IntervalNs int64    `json:"interval_ns"`
	Methods    []string `json:"methods"`
	Settings   []string `json:"settings"`
	// Cells are in method-major order: Cells[m*len(Settings)+s].
	Cells []sweep.CompareCell `json:"cells"`
	// Best is, per method, the index of its best cell's setting.
	Best []int `json:"best_setting"`
	// Verdict says the verdict's cell (sweep.JudgeCompare) in words.
	Verdict string `json:"verdict"`
	// Load is the load the matrix was measured under (--load); absent for
	// none. Its CPU column leaves the load's CPU time out.
	Load    *Load `json:"load,omitempty"`
	Partial bool  `json:"partial"`
	// NotRunning is what the matrix saw of the process not running: the
	// cells' intervals leave those samples out.
	NotRunning *sweep.NotRunning `json:"not_running,omitempty"`
	RawFile    string            `json:"raw_file,omitempty"`
}

// CompareOf is a compare file's result for rendering: the facts of its
// raw file and the judgement of it (sweep.JudgeCompare). compare and
// analyze both build it here.
func CompareOf(f *rawfile.File, judged *sweep.CompareResult) *Compare {
	c := &Compare{OS: f.Query.OS, OSBuild: OSBuild(f.Query), IntervalNs: judged.IntervalNs, Methods: judged.Methods, Settings: judged.Settings,
		Cells: judged.Cells, Best: judged.Best, Load: LoadOf(f), Partial: judged.Partial,
		NotRunning: judged.NotRunning}
	if judged.Verdict >= 0 {
		cell := judged.Cells[judged.Verdict]
		c.Verdict = fmt.Sprintf("for a %s loop on this machine use %s with %s: intervals p50 %s, p95 %s ms, %.0f %% CPU",
			Delay(judged.IntervalNs), cell.Method, cell.Setting, ms(cell.P50), ms(cell.P95), 100*cell.CPU)
	}
	return c
}

// WriteCompare renders the matrix: methods as rows, settings as columns,
// p50 / p95 of the intervals in ms, the best cell per row marked.
func WriteCompare(w io.Writer, c *Compare) {
	p := newPrinter(w, "")
	title := fmt.Sprintf("tickscope compare: intervals of a %s wait, p50 / p95 ms (* best per method)", Delay(c.IntervalNs))
	if c.Partial {
		title += " (stopped early)"
	}
	p.line(title)
	p.line("")
	if c.Load != nil {
		writeLoad(p, c.Load)
		p.line("")
	}
	header := fmt.Sprintf("  %-15s", "method")
	for _, s := range c.Settings {
		header += fmt.Sprintf(" %-24s", s)
	}
	p.line(strings.TrimRight(header, " "))
	for m, method := range c.Methods {
		row := fmt.Sprintf("  %-15s", method)
		for s := range c.Settings {
			cell := c.Cells[m*len(c.Settings)+s]
			text := "-"
			if cell.Count > 0 {
				text = fmt.Sprintf("%s / %s", ms(cell.P50), ms(cell.P95))
				if c.Best[m] == s {
					text += " *"
				}
			}
			row += fmt.Sprintf(" %-24s", text)
		}
		p.line(strings.TrimRight(row, " "))
	}
	p.line("")
	p.line("  long: share of intervals >= 2x the target; early: < 0.5x (catch-up); drift; CPU")
	for _, cell := range c.Cells {
		if cell.Count == 0 {
			continue
		}
		p.line(fmt.Sprintf("  %-15s %-34s long %5.1f %%  early %5.1f %%  drift %10s  CPU %5.1f %%  max %s ms",
			cell.Method, cell.Setting, 100*cell.Long, 100*cell.Early, fmtSigned(cell.DriftNs), 100*cell.CPU, ms(cell.Max)))
	}
	p.line("")
	if c.Verdict != "" {
		p.line(c.Verdict)
	}
	if nr := c.NotRunning; nr != nil {
		p.kv("not running", nr.Sentence())
	}
	if c.RawFile != "" {
		p.line("")
		p.line("raw samples written to " + c.RawFile)
	}
}
