package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/stats"
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
	Cells []Cell `json:"cells"`
	// Best is, per method, the index of its best cell's setting.
	Best    []int  `json:"best_setting"`
	Verdict string `json:"verdict"`
	Partial bool   `json:"partial"`
	RawFile string `json:"raw_file,omitempty"`
}

// Cell is one method under one setting.
type Cell struct {
	Method  string `json:"method"`
	Setting string `json:"setting"`
	Granted string `json:"granted"`
	Count   int    `json:"count"`
	P50     int64  `json:"p50_ns"`
	P95     int64  `json:"p95_ns"`
	P99     int64  `json:"p99_ns"`
	Max     int64  `json:"max_ns"`
	// Long is the share of intervals at least twice the target; Early the
	// share under half of it (a late tick's catch-up).
	Long  float64 `json:"long_share"`
	Early float64 `json:"early_share"`
	// DriftNs is the elapsed time minus intervals × target.
	DriftNs int64 `json:"drift_ns"`
	// CPU is the process's CPU time over the wall time while it ran.
	CPU float64 `json:"cpu"`
}

// intervals turns a point's samples into intervals between wake-ups, in
// buf (reused; grown as needed): a relative method's samples already are. A
// periodic one's are the delay plus each wake's lateness past its
// deadline, and deadline k follows deadline k-1 by one delay, plus one more
// for each deadline that had already passed when wait k began (the
// measurement loop skips those and counts them as overruns). The loop
// begins wait k right after wake k-1, so those skipped are the whole
// delays in wake k-1's lateness: wakes k-1 and k are
// L[k] - L[k-1] + delay × (1 + ⌊max(L[k-1] - delay, 0) / delay⌋) apart.
// (A deadline that falls in the few ns between a wake and the next wait's
// start is skipped by the loop but not counted here; that costs one
// interval one delay, rarely.) Without the skipped deadlines a wake more
// than a delay late would make the next interval negative.
func intervals(p *rawfile.Point, delay int64, buf []int64) []int64 {
	if !p.Periodic {
		return append(buf[:0], p.Latencies...)
	}
	out := buf[:0]
	for i, l := range p.Latencies {
		if i == 0 {
			out = append(out, l)
			continue
		}
		previous := p.Latencies[i-1]
		skipped := max(previous-delay, 0) / delay
		out = append(out, l-previous+delay*(1+skipped))
	}
	return out
}

// CellOf summarises one compare point.
func CellOf(p *rawfile.Point, delay int64) Cell {
	c, _ := cellOf(p, delay, nil)
	return c
}

// cellOf is CellOf computing the intervals in buf, which it returns for
// the next cell: a matrix of 48 cells of 100,000 samples then needs one
// buffer instead of 48 of 800 KB each.
func cellOf(p *rawfile.Point, delay int64, buf []int64) (Cell, []int64) {
	iv := intervals(p, delay, buf)
	var elapsed int64
	long, early := 0, 0
	for _, v := range iv {
		elapsed += v
		if v >= 2*delay {
			long++
		}
		if v < delay/2 {
			early++
		}
	}
	slices.Sort(iv)
	s := stats.SummarizeSorted(iv)
	c := Cell{Method: p.Method, Setting: p.Requested.String(), Granted: p.Granted.String(), Count: len(iv),
		P50: s.P50, P95: s.P95, P99: s.P99, Max: s.Max, DriftNs: elapsed - int64(len(iv))*delay}
	if n := float64(max(len(iv), 1)); n > 0 {
		c.Long, c.Early = float64(long)/n, float64(early)/n
	}
	if p.Conditions.WallNs > 0 {
		c.CPU = float64(p.Conditions.CPUNs) / float64(p.Conditions.WallNs)
	}
	return c, iv
}

// score is how far a cell's typical and tail intervals sit from the target.
func score(c Cell, delay int64) int64 {
	return max(abs64(c.P50-delay), abs64(c.P95-delay))
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// CompareOf builds the matrix from a compare raw file. With nil methods
// or settings (analyze), they are the points' own, in the order measured.
// It is linear in the points and the cells: each point finds its row and
// column in a map, and only a file the reader accepted (at most
// rawfile.MaxCompareMethods × rawfile.MaxCompareSettings cells) is given
// to it from a file. A point outside the given methods or settings, or a
// second point for a cell, is left out.
func CompareOf(f *rawfile.File, methods, settings []string) *Compare {
	if methods == nil || settings == nil {
		methods, settings = nil, nil
		seenMethod, seenSetting := map[string]bool{}, map[string]bool{}
		for i := range f.Points {
			p := &f.Points[i]
			if !seenMethod[p.Method] {
				seenMethod[p.Method] = true
				methods = append(methods, p.Method)
			}
			if s := p.Requested.String(); !seenSetting[s] {
				seenSetting[s] = true
				settings = append(settings, s)
			}
		}
	}
	row, column := indexOf(methods), indexOf(settings)
	c := &Compare{OS: f.Query.OS, OSBuild: OSBuild(f.Query), IntervalNs: f.DelayNs, Methods: methods, Settings: settings}
	c.Cells = make([]Cell, len(methods)*len(settings))
	var buf []int64
	for i := range f.Points {
		p := &f.Points[i]
		c.Partial = c.Partial || p.Stopped
		m, okM := row[p.Method]
		s, okS := column[p.Requested.String()]
		if okM && okS && c.Cells[m*len(settings)+s].Count == 0 {
			c.Cells[m*len(settings)+s], buf = cellOf(p, f.DelayNs, buf)
		}
	}
	bestCell := -1
	for m := range methods {
		best := -1
		for s := range settings {
			cell := c.Cells[m*len(settings)+s]
			if cell.Count > 0 && (best < 0 || score(cell, f.DelayNs) < score(c.Cells[m*len(settings)+best], f.DelayNs)) {
				best = s
			}
		}
		c.Best = append(c.Best, best)
		// The verdict leaves out methods that keep a CPU busy.
		if best >= 0 {
			cell := c.Cells[m*len(settings)+best]
			if cell.CPU < 0.5 && (bestCell < 0 || score(cell, f.DelayNs) < score(c.Cells[bestCell], f.DelayNs)) {
				bestCell = m*len(settings) + best
			}
		}
	}
	if bestCell >= 0 {
		cell := c.Cells[bestCell]
		c.Verdict = fmt.Sprintf("for a %s loop on this machine use %s with %s: intervals p50 %s, p95 %s ms, %.0f %% CPU",
			fmtDuration(f.DelayNs), cell.Method, cell.Setting, ms(cell.P50), ms(cell.P95), 100*cell.CPU)
	}
	return c
}

// indexOf maps each name to its first position.
func indexOf(names []string) map[string]int {
	index := make(map[string]int, len(names))
	for i, name := range names {
		if _, dup := index[name]; !dup {
			index[name] = i
		}
	}
	return index
}

// WriteCompare renders the matrix: methods as rows, settings as columns,
// p50 / p95 of the intervals in ms, the best cell per row marked.
func WriteCompare(w io.Writer, c *Compare) {
	p := newPrinter(w, "")
	title := fmt.Sprintf("tickscope compare: intervals of a %s wait, p50 / p95 ms (* best per method)", fmtDuration(c.IntervalNs))
	if c.Partial {
		title += " (stopped early)"
	}
	p.line(title)
	p.line("")
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
	if c.RawFile != "" {
		p.line("")
		p.line("raw samples written to " + c.RawFile)
	}
}
