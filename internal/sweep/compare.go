package sweep

import (
	"slices"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/stats"
)

// CompareResult is the judgement of a compare file: every wait method
// under every setting as intervals of the target, each method's best
// setting, and the cell the verdict names.
type CompareResult struct {
	IntervalNs int64
	Methods    []string
	Settings   []string
	// Cells are in method-major order: Cells[m*len(Settings)+s].
	Cells []CompareCell
	// Best is, per method, the index of its best cell's setting, -1 when
	// none was measured.
	Best []int
	// Verdict is the index of the best cell among those using under half a
	// CPU, -1 when there is none.
	Verdict int
	Partial bool
	// NotRunning is what the cells' points saw of the process not
	// running; their intervals leave those samples out.
	NotRunning *NotRunning
}

// CompareCell is one method under one setting.
type CompareCell struct {
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

// VerdictMaxCPU is the most CPU a cell may use to be the verdict: a method
// that keeps a core busy is no answer for a loop that waits.
const VerdictMaxCPU = 0.5

// JudgeCompare judges a compare raw file: the command and analyze both
// judge through it. With nil methods or settings (analyze), they are the
// points' own, in the order measured. It is linear in the points and the
// cells: each point finds its row and column in a map, and only a file the
// reader accepted (at most rawfile.MaxCompareMethods ×
// rawfile.MaxCompareSettings cells) is given to it from a file. A point
// outside the given methods or settings, or a second point for a cell, is
// left out.
//
// A cell's score is how far its typical and tail intervals sit from the
// target (the larger of its p50's and p95's distances); each method's best
// setting has the lowest, and the verdict is the lowest-scoring best cell
// that uses under VerdictMaxCPU.
func JudgeCompare(f *rawfile.File, methods, settings []string) *CompareResult {
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
	row, column := positions(methods), positions(settings)
	c := &CompareResult{IntervalNs: f.DelayNs, Methods: methods, Settings: settings, Verdict: -1}
	c.Cells = make([]CompareCell, len(methods)*len(settings))
	var buf []int64
	var judged []rawfile.Point
	for i := range f.Points {
		p := &f.Points[i]
		c.Partial = c.Partial || p.Stopped
		m, okM := row[p.Method]
		s, okS := column[p.Requested.String()]
		if okM && okS && c.Cells[m*len(settings)+s].Count == 0 {
			c.Cells[m*len(settings)+s], buf = cellOf(p, f.DelayNs, buf)
			if p.NotRunning != nil {
				judged = append(judged, *p)
			}
		}
	}
	c.NotRunning = NotRunningOf(judged)
	for m := range methods {
		best := -1
		for s := range settings {
			cell := c.Cells[m*len(settings)+s]
			if cell.Count > 0 && (best < 0 || score(cell, f.DelayNs) < score(c.Cells[m*len(settings)+best], f.DelayNs)) {
				best = s
			}
		}
		c.Best = append(c.Best, best)
		if best >= 0 {
			cell := c.Cells[m*len(settings)+best]
			if cell.CPU < VerdictMaxCPU && (c.Verdict < 0 || score(cell, f.DelayNs) < score(c.Cells[c.Verdict], f.DelayNs)) {
				c.Verdict = m*len(settings) + best
			}
		}
	}
	return c
}

// score is how far a cell's typical and tail intervals sit from the target.
func score(c CompareCell, delay int64) int64 {
	return max(abs(c.P50-delay), abs(c.P95-delay))
}

// positions maps each name to its first position.
func positions(names []string) map[string]int {
	index := make(map[string]int, len(names))
	for i, name := range names {
		if _, dup := index[name]; !dup {
			index[name] = i
		}
	}
	return index
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
//
// A sample taken while the process was not running (p.NotRunning) is no
// interval of the timer's: a relative method's is left out, and so are
// the two intervals a periodic one's wake ends and begins (its lateness is
// in both).
func intervals(p *rawfile.Point, delay int64, buf []int64) []int64 {
	var marked []int
	if p.NotRunning != nil {
		marked = p.NotRunning.Samples
	}
	out := buf[:0]
	previousMarked := false
	for i, l := range p.Latencies {
		isMarked := len(marked) > 0 && marked[0] == i
		if isMarked {
			marked = marked[1:]
		}
		switch {
		case isMarked:
		case !p.Periodic || i == 0:
			out = append(out, l)
		case !previousMarked:
			previous := p.Latencies[i-1]
			skipped := max(previous-delay, 0) / delay
			out = append(out, l-previous+delay*(1+skipped))
		}
		previousMarked = isMarked
	}
	return out
}

// cellOf summarises one compare point, computing the intervals in buf,
// which it returns for the next cell: a matrix of 48 cells of 100,000
// samples then needs one buffer instead of 48 of 800 KB each.
func cellOf(p *rawfile.Point, delay int64, buf []int64) (CompareCell, []int64) {
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
	c := CompareCell{Method: p.Method, Setting: p.Requested.String(), Granted: p.Granted.String(), Count: len(iv),
		P50: s.P50, P95: s.P95, P99: s.P99, Max: s.Max, DriftNs: elapsed - int64(len(iv))*delay}
	if n := float64(max(len(iv), 1)); n > 0 {
		c.Long, c.Early = float64(long)/n, float64(early)/n
	}
	if p.Conditions.WallNs > 0 {
		c.CPU = float64(p.Conditions.CPUNs) / float64(p.Conditions.WallNs)
	}
	return c, iv
}
