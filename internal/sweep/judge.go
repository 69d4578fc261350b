// Package sweep plans and judges the bench: the candidate grid, the
// adaptive sampling that spends most of its time where the answer is, the
// bands of equivalent settings, the recommendation under the gates, and the
// re-check. It judges compare's matrix (each method's best setting and the
// verdict) and curve's tick too. Judging is a pure function of a raw
// file's points, which the commands call before rendering, so `analyze`
// re-judges a raw file to exactly the command's result.
package sweep

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/stats"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// The gates no recommendation may violate (TickTune's, from its README).
const (
	GateMaxInterference = 0.02
	GateMinP50Ns        = 990_000
	GateMaxP95Ns        = 2_500_000
)

// ConsistencyNs and MaxTailShare are tickscope's addition to TickTune's
// gates: a row passes only if the share of its samples more than
// ConsistencyNs over its p50 (its "tail") is not significantly above
// MaxTailShare. A row at the knee that wakes a tick late one time in ten,
// or a 1 µs neighbour that takes an extra tick one wait in seven, has the
// lowest p50 of all and a p95 under the 2.5 ms cap, yet is the worst
// setting to hold. "Significantly" (two standard errors of a share at
// MaxTailShare) keeps the 2 % of extra ticks a busy machine shows
// everywhere from failing rows at random and splitting its bands.
const (
	ConsistencyNs = 250_000
	MaxTailShare  = 0.05
)

// BandToleranceNs is the widest spread of p50 within one band. Neighbours
// within it are indistinguishable for a 1 ms wait: the bench samples at
// tick granularity, and half of 50 µs is beyond any jitter we model.
const BandToleranceNs = 25_000

// RecheckToleranceNs is how far the re-check's p50 may move before the
// result is called unstable: 2 % of a 1 ms wait.
const RecheckToleranceNs = 20_000

// Preferences say what the user wants. A result records the preferences it
// was judged under, with only the budgets that bench applies: the Windows
// bench's p50 and p95, the Linux bench's p99 lateness.
type Preferences struct {
	// Prefer is "latency" (the lowest p50 that passes the gates) or "power"
	// (Windows: the coarsest band inside the p50 and p95 budgets; Linux: the
	// largest slack inside the lateness budget).
	Prefer    string `json:"prefer"`
	BudgetP50 int64  `json:"budget_p50_ns,omitempty"`
	BudgetP95 int64  `json:"budget_p95_ns,omitempty"`
	// BudgetLateness bounds the p99 lateness (Linux).
	BudgetLateness int64 `json:"budget_p99_lateness_ns,omitempty"`
}

// DefaultPreferences are TickTune's, and on Linux a p99 lateness of 100 µs.
func DefaultPreferences() Preferences {
	return Preferences{Prefer: "latency", BudgetP50: 1_350_000, BudgetP95: 2_000_000, BudgetLateness: 100_000}
}

// Row is one measured setting: a granted period and what it delivered.
type Row struct {
	Requested uint32   `json:"requested_100ns"`
	SameAs    []uint32 `json:"same_as_100ns,omitempty"`
	Granted   uint32   `json:"granted_100ns"`
	// Affected is set when another process held a finer period than this
	// request while it was measured: the row shows that period, not this one.
	Affected bool          `json:"affected"`
	Summary  stats.Summary `json:"summary"`
	// TailShare is the share of samples more than ConsistencyNs over p50.
	TailShare float64 `json:"tail_share"`
	// StallShare is the share the interference gate judges (stallShare):
	// waits over p50 by more than 1 ms and by more than one and a half
	// granted periods.
	StallShare float64 `json:"stall_share"`
	// ExtraTickShare is the share of samples a tick or more late: over p50
	// by more than half the granted period.
	ExtraTickShare float64 `json:"extra_tick_share"`
	// P50SE is the standard error of p50 (stats.PercentileSE): the noise
	// two settings' p50s are compared against.
	P50SE float64 `json:"p50_se_ns"`
	// Pass says whether the row meets every gate; Confirmed whether it has
	// the full sample count, without which it cannot be recommended.
	Pass      bool `json:"pass"`
	Confirmed bool `json:"confirmed"`
	// NotRunning counts the samples taken while the process was not
	// running, left out of the summary and the gates (Confirmed counts
	// them: they were taken).
	NotRunning int `json:"not_running,omitempty"`

	// sorted are the row's samples, ascending: the power budget's p95 and
	// the latency pick's intervals are computed from them.
	sorted []int64
}

// Band is a run of neighbouring rows that measure the same.
type Band struct {
	LoGranted uint32 `json:"lo_granted_100ns"`
	HiGranted uint32 `json:"hi_granted_100ns"`
	Rows      []int  `json:"rows"`
	// P50 is the median of the rows' p50s.
	P50  int64 `json:"p50_ns"`
	Pass bool  `json:"pass"`
	// Equivalent marks the bands whose p50 was not noticeably above the
	// best eligible band's (chooseLatency) when the latency pick chose
	// among them by the tail and then the coarsest period.
	Equivalent bool `json:"equivalent,omitempty"`
	// P50VsBest is, for the latency pick's other candidates, the middle
	// row's p50 minus the lowest candidate's, with its interval: the test
	// that found it equivalent or not. The intervals of all the bands hold
	// at once with 95 % (pairAlpha: the lowest is chosen by the samples).
	P50VsBest *stats.Interval `json:"p50_vs_best,omitempty"`
	// DominatedBy is the index of a band whose middle row's p50 is lower
	// than this band's beyond the noise (at pairAlpha, as every pair is
	// tested) and whose p99 is lower: the latency pick never takes it.
	DominatedBy *int `json:"dominated_by,omitempty"`
}

// Result is the bench's judgement.
type Result struct {
	Preferences Preferences `json:"preferences"`
	Rows        []Row       `json:"rows"`
	Bands       []Band      `json:"bands"`
	// HeldElsewhere is the finest period another process held during the
	// sweep, when it was finer than some candidate (0 otherwise).
	HeldElsewhere uint32 `json:"held_elsewhere_100ns,omitempty"`
	// Recommended is an index into Rows, -1 when nothing qualifies.
	Recommended int `json:"recommended_row"`
	// Band is the index of the recommended row's band.
	Band int `json:"recommended_band"`
	// Floor is the index of the finest unaffected row.
	Floor int `json:"floor_row"`
	// FellBack is set when --prefer power found nothing inside the budget
	// and the latency pick was taken.
	FellBack bool `json:"fell_back_to_latency"`
	// Stability is "stable", "unstable, rerun when quieter", or
	// "not re-checked".
	Stability string `json:"stability"`
	// Recheck holds the re-check's summaries: the winner and the floor.
	RecheckWinner *stats.Summary `json:"recheck_winner,omitempty"`
	RecheckFloor  *stats.Summary `json:"recheck_floor,omitempty"`
	Partial       bool           `json:"partial"`
	// Discarded counts the points measured while the timer period changed
	// (Dawson's rule): they are evidence for no band.
	Discarded *Discards `json:"discarded,omitempty"`
	// NoticeableNs is the smallest p50 difference the latency pick counted
	// (NoticeableLatencyShare of the lowest p50); 0 when it did not choose.
	NoticeableNs float64 `json:"noticeable_ns,omitempty"`
	// Confidence is the recommended row's figures and its margin over the
	// runner-up band's middle row, with their intervals.
	Confidence *Confidence `json:"confidence,omitempty"`
	// NotRunning is what the sweep saw of the process not running; its
	// samples are left out of every row and re-check.
	NotRunning *NotRunning `json:"not_running,omitempty"`
}

// Discards are the points a judgement left out because the timer period
// changed while they were measured.
type Discards struct {
	Points  int `json:"points"`
	Samples int `json:"samples"`
	// PeriodsSeen are the periods in force around them other than the one
	// the sweep started with, finest first.
	PeriodsSeen []uint32 `json:"periods_seen_100ns"`
}

// HeldElsewhereAdvice is what to do about a sweep another process's finer
// period contaminated: only candidates at or finer than that period
// measured themselves.
const HeldElsewhereAdvice = "close the program that holds it (tickscope who names it) and run the bench again"

// Stability values.
const (
	Stable       = "stable"
	Unstable     = "unstable, rerun when quieter"
	NotRechecked = "not re-checked"
)

// affected reports whether a point was measured while another process held
// a period finer than its request (timerinfo.HeldFinerThan, with no
// allowance): the point measured that period, not its own.
func affected(p *rawfile.Point) bool {
	return timerinfo.HeldFinerThan(p.Conditions.CurrentBefore100ns, p.Requested.Resolution100ns)
}

// Disturbed reports whether the timer period changed while a point was
// measured (Dawson's rule: a result is valid only if the period did not
// change while it was measured): it differs before and after, or from
// period, the period in force when the sweep began (0 when unknown). The
// period is read with nothing of this process's held, so only another
// process can have changed it.
func Disturbed(p *rawfile.Point, period uint32) bool {
	before, after := p.Conditions.CurrentBefore100ns, p.Conditions.CurrentAfter100ns
	return before != after || (period != 0 && before != 0 && before != period)
}

// Judge recommends from measured points. Points with Phase "" are the sweep,
// one per granted period; "recheck" points are the re-check of the winner
// and the floor. minSamples is the sample count a row needs to be
// recommended; period is the timer period in force when the sweep began (0
// when unknown), and a point measured while the period was another is left
// out (Disturbed) and counted.
func Judge(points []rawfile.Point, prefs Preferences, minSamples int, period uint32) *Result {
	prefs.BudgetLateness = 0 // a Linux budget: the Windows bench does not apply it
	r := &Result{Preferences: prefs, Recommended: -1, Band: -1, Floor: -1, Stability: NotRechecked, NotRunning: NotRunningOf(points)}
	var rechecks []*rawfile.Point
	for i := range points {
		p := &points[i]
		if p.Stopped {
			r.Partial = true
		}
		if Disturbed(p, period) {
			r.discard(p, period)
			continue
		}
		if p.Phase == rawfile.PhaseRecheck {
			rechecks = append(rechecks, p)
			continue
		}
		sorted := slices.Clone(p.Running())
		slices.Sort(sorted)
		row := Row{
			Requested:  p.Requested.Resolution100ns,
			SameAs:     p.SameAs,
			Granted:    p.Granted.Resolution100ns,
			Affected:   affected(p),
			Summary:    stats.SummarizeSorted(sorted),
			NotRunning: p.LeftOut(),
			sorted:     sorted,
		}
		if row.Affected && (r.HeldElsewhere == 0 || p.Conditions.CurrentBefore100ns < r.HeldElsewhere) {
			r.HeldElsewhere = p.Conditions.CurrentBefore100ns
		}
		row.Confirmed = len(p.Latencies) >= minSamples
		row.TailShare = tailShare(sorted, row.Summary.P50, ConsistencyNs)
		row.ExtraTickShare = tailShare(sorted, row.Summary.P50, int64(row.Granted)*100/2)
		row.StallShare = stallShare(sorted, row.Summary.P50, row.Granted)
		row.P50SE = stats.PercentileSE(sorted, 50)
		row.Pass = passes(sorted, row.Summary, row.Granted)
		r.Rows = append(r.Rows, row)
	}
	sort.SliceStable(r.Rows, func(i, j int) bool { return r.Rows[i].Requested < r.Rows[j].Requested })
	erode(r.Rows)
	for i, row := range r.Rows {
		if !row.Affected {
			r.Floor = i
			break
		}
	}
	r.Bands = bands(r.Rows)
	chosen := pick(r.Rows, r.Bands, prefs, -1, eligible)
	r.Band, r.FellBack = chosen.band, chosen.fellBack
	if ch := chosen.latency; ch != nil && ch.pick >= 0 {
		r.NoticeableNs = ch.noticeableNs
		r.markBands(chosen.cands, ch)
	}
	if r.Band >= 0 {
		r.Recommended = middle(r.Bands[r.Band])
		runnerUp, runnerUpSorted := -1, []int64(nil)
		if b := pick(r.Rows, r.Bands, prefs, r.Band, eligible).band; b >= 0 {
			runnerUp = middle(r.Bands[b])
			runnerUpSorted = r.Rows[runnerUp].sorted
		}
		candidates := 0
		for _, b := range r.Bands {
			if eligible(r.Rows, b) {
				candidates++
			}
		}
		r.Confidence = confidenceOf(r.Rows[r.Recommended].sorted, runnerUp, runnerUpSorted, candidates)
	}
	r.judgeRecheck(rechecks)
	return r
}

// markBands records how the latency pick saw each band it chose among.
func (r *Result) markBands(cands []candidate, ch *choice) {
	for _, m := range ch.marks(cands) {
		b := &r.Bands[m.index]
		b.Equivalent, b.P50VsBest, b.DominatedBy = m.equivalent, m.vsBest, m.dominatedBy
	}
}

// discard counts a disturbed point and the periods seen around it.
func (r *Result) discard(p *rawfile.Point, period uint32) {
	if r.Discarded == nil {
		r.Discarded = &Discards{PeriodsSeen: []uint32{}}
	}
	d := r.Discarded
	d.Points++
	d.Samples += len(p.Latencies)
	d.PeriodsSeen = addPeriodsSeen(d.PeriodsSeen, p, period)
}

// addPeriodsSeen adds to seen (sorted) the periods other than period that
// a disturbed point's conditions read before and after it: the sweep while
// it measures and the judgement of its file name the same periods.
func addPeriodsSeen(seen []uint32, p *rawfile.Point, period uint32) []uint32 {
	for _, s := range []uint32{p.Conditions.CurrentBefore100ns, p.Conditions.CurrentAfter100ns} {
		if s != 0 && s != period && !slices.Contains(seen, s) {
			seen = append(seen, s)
		}
	}
	slices.Sort(seen)
	return seen
}

// JudgeFile judges a Windows bench's raw file, needing a row's full
// sample count (the bench's --samples) to recommend it, and leaving out
// the points measured while the period differed from the one its query
// found before the sweep: bench and analyze both judge through it, so
// analysing the file a bench wrote gives exactly the bench's result.
func JudgeFile(f *rawfile.File, prefs Preferences) *Result {
	minSamples := 0
	if f.Bench != nil {
		minSamples = f.Bench.Samples
	}
	var period uint32
	if f.Query != nil && f.Query.Windows != nil {
		period = f.Query.Windows.Current100ns
	}
	return Judge(f.Points, prefs, minSamples, period)
}

// erode fails every row next to a confirmed row that fails the consistency
// gate. Where a row that passes sits between failing ones it is an edge, and
// edges are marginal: across the knee of a busy machine, rows that wake a
// tick late and rows that do not alternate by chance, and a sliver that
// passed once is no setting to hold. A row that fails on interference
// (multi-millisecond stalls, which strike any period alike) says nothing
// about its neighbours and erodes none. It runs on the rows' own verdicts,
// so it erodes by one row only.
func erode(rows []Row) {
	failing := make([]bool, len(rows))
	for i, row := range rows {
		failing[i] = !row.Affected && row.Confirmed && stats.ShareAbove(row.TailShare, MaxTailShare, row.Summary.Count)
	}
	for i := range rows {
		if (i > 0 && failing[i-1]) || (i+1 < len(rows) && failing[i+1]) {
			rows[i].Pass = false
		}
	}
}

// passes applies the gates to a row's samples. The shares, stalls (the
// interference gate), the waits over 2.5 ms (the p95 gate: a p95 over
// 2.5 ms is more than 5 % of the waits over it) and the tail (the
// consistency gate), are judged with one significance test
// (stats.ShareAbove): a row fails when its share is significantly above the
// gate, so that a share sitting on its gate does not pass or fail by chance
// from run to run (and with it which band qualifies, and the --prefer power
// pick). A p95 is a cliff: at a coarse period a busy machine's 2 % of extra
// ticks put more than 5 % of a row's waits a tick late one run in a
// hundred, and its p95 jumps by a whole tick.
func passes(latencies []int64, s stats.Summary, granted uint32) bool {
	if s.Count == 0 {
		return false
	}
	n := s.Count
	return s.P50 >= GateMinP50Ns &&
		!stats.ShareAbove(stallShare(latencies, s.P50, granted), GateMaxInterference, n) &&
		!stats.ShareAbove(shareOver(latencies, GateMaxP95Ns), 0.05, n) &&
		!stats.ShareAbove(tailShare(latencies, s.P50, ConsistencyNs), MaxTailShare, n)
}

// shareOver is the share of latencies over limit ns.
func shareOver(latencies []int64, limit int64) float64 {
	return tailShare(latencies, 0, limit)
}

// stallShare is the share the interference gate judges: waits over p50 by
// more than stats.InterferenceThresholdNs (TickTune's 1 ms) and by more
// than one and a half granted periods. At periods under 0.67 ms this is
// TickTune's interference. From there up one extra tick alone overshoots
// by a period, about 1 ms or more: TickTune's definition would count it as
// interference at coarse periods and not at fine ones, and a busy machine's
// 2 % of extra ticks would sit every coarse row on the 2 % gate, passing or
// failing by chance. A single extra tick is the consistency gate's to judge
// (TailShare counts it at every period); the interference gate counts the
// stalls that one tick does not explain.
func stallShare(latencies []int64, p50 int64, granted100ns uint32) float64 {
	return tailShare(latencies, p50, max(stats.InterferenceThresholdNs, int64(granted100ns)*100*3/2))
}

// tailShare is the share of latencies more than over ns over p50.
func tailShare(latencies []int64, p50, over int64) float64 {
	n := 0
	for _, v := range latencies {
		if v > p50+over {
			n++
		}
	}
	return float64(n) / float64(max(len(latencies), 1))
}

// bands partitions unaffected rows, in order of period, into runs whose
// p50s span at most BandToleranceNs and whose confirmed rows agree on the
// gates (a row with only a first look has no say on the gates: ten samples
// cannot tell 2 % interference). A bound on the whole span, not only on
// neighbours, keeps a slow ramp from chaining into one band.
func bands(rows []Row) []Band {
	var out []Band
	var cur *Band
	var lo, hi int64
	curVerdict := 0 // 0 unknown, 1 pass, -1 fail
	verdict := func(row Row) int {
		switch {
		case !row.Confirmed:
			return 0
		case row.Pass:
			return 1
		}
		return -1
	}
	for i, row := range rows {
		if row.Affected {
			cur = nil
			continue
		}
		p50, v := row.Summary.P50, verdict(row)
		if cur != nil && (v == 0 || curVerdict == 0 || v == curVerdict) && max(hi, p50)-min(lo, p50) <= BandToleranceNs {
			cur.Rows = append(cur.Rows, i)
			cur.HiGranted = row.Granted
			lo, hi = min(lo, p50), max(hi, p50)
			if curVerdict == 0 {
				curVerdict = v
			}
			continue
		}
		out = append(out, Band{LoGranted: row.Granted, HiGranted: row.Granted, Rows: []int{i}})
		cur = &out[len(out)-1]
		lo, hi, curVerdict = p50, p50, v
	}
	for i := range out {
		b := &out[i]
		p50s := make([]int64, len(b.Rows))
		b.Pass = true
		for j, idx := range b.Rows {
			p50s[j] = rows[idx].Summary.P50
			if rows[idx].Confirmed && !rows[idx].Pass {
				b.Pass = false
			}
		}
		slices.Sort(p50s)
		b.P50 = p50s[(len(p50s)-1)/2]
	}
	return out
}

// eligible reports whether a band may be recommended: its confirmed rows
// pass the gates and its middle row is confirmed (and so passes too).
func eligible(rows []Row, b Band) bool {
	return b.Pass && rows[middle(b)].Confirmed
}

// contending reports whether a band could be recommended once its rows
// have the full sample count: its confirmed rows pass the gates. The
// planner measures the runner-up among such bands (Runner.targets).
func contending(_ []Row, b Band) bool { return b.Pass }

// Confirmed reports whether any row of the band has the full sample count.
func (b Band) Confirmed(rows []Row) bool {
	for _, i := range b.Rows {
		if rows[i].Confirmed {
			return true
		}
	}
	return false
}

// bandPick is a band pick; latency and cands are how the latency pick saw
// the bands when it made it (nil when the power pick did).
type bandPick struct {
	band     int
	fellBack bool
	latency  *choice
	cands    []candidate
}

// pick chooses a band by preference among the eligible, leaving out band
// skip (-1: none); band is -1 when none qualifies.
//
// The latency pick takes the lowest p50 as chooseLatency does: never a
// band another beats on p50 beyond the noise and on p99, and among bands
// whose p50s are not noticeably apart the lower tail, then the coarsest
// period. A band of one row is all edge: it is taken only when no wider
// band qualifies, because repeated runs do not agree on it (a row at the
// knee that wakes fast a little over half the time has the lowest p50 of
// all, and is the worst setting to hold).
func pick(rows []Row, bs []Band, prefs Preferences, skip int, eligible func([]Row, Band) bool) bandPick {
	chosen := pickLatency(rows, bs, 2, skip, eligible)
	if chosen.band < 0 {
		chosen = pickLatency(rows, bs, 1, skip, eligible)
	}
	if prefs.Prefer != "power" {
		return chosen
	}
	// Power walks down from the coarsest band, where the grid is coarse
	// and a ramp of one-row bands is no edge: every row may be taken.
	for i := len(bs) - 1; i >= 0; i-- {
		b := bs[i]
		if i == skip || !eligible(rows, b) {
			continue
		}
		if inBudget(rows[middle(b)], prefs) {
			return bandPick{band: i}
		}
	}
	chosen.fellBack = chosen.band >= 0
	return chosen
}

// inBudget reports whether a row is inside the power budget with a margin
// of what a user could notice (NoticeableLatencyShare of each budget): a
// p50 or p95 within it of the budget is on the budget, and whether noise
// puts it just inside or just outside would decide the pick (on a busy
// machine the 1.35 ms row sits on the default p50 budget). The p95 budget
// is judged as the gates judge theirs: no more than 5 % of the waits over
// it, unless significantly.
func inBudget(row Row, prefs Preferences) bool {
	margin := func(budget int64) int64 { return int64(NoticeableLatencyShare * float64(budget)) }
	limit := prefs.BudgetP95 - margin(prefs.BudgetP95)
	return row.Summary.P50 <= prefs.BudgetP50-margin(prefs.BudgetP50) && !stats.ShareAbove(shareOver(row.sorted, limit), 0.05, row.Summary.Count)
}

// pickLatency is the latency pick among the eligible bands of at least
// minRows rows but skip, judged by each band's middle row (the one it
// recommends), coarsest last.
func pickLatency(rows []Row, bs []Band, minRows, skip int, eligible func([]Row, Band) bool) bandPick {
	var cands []candidate
	for i, b := range bs {
		if i == skip || !eligible(rows, b) || len(b.Rows) < minRows {
			continue
		}
		mid := rows[middle(b)]
		cands = append(cands, newCandidate(i, mid.sorted, mid.ExtraTickShare))
	}
	ch := chooseLatency(cands, 0, NoticeableLatencyShare)
	return bandPick{band: ch.pick, latency: &ch, cands: cands}
}

// middle is a band's middle row: its edges are marginal by definition.
func middle(b Band) int { return b.Rows[(len(b.Rows)-1)/2] }

// judgeRecheck compares the re-check with the sweep.
func (r *Result) judgeRecheck(rechecks []*rawfile.Point) {
	if r.Recommended < 0 || len(rechecks) == 0 {
		return
	}
	winner := r.Rows[r.Recommended]
	var winnerLat, floorLat []int64
	for _, p := range rechecks {
		switch p.Requested.Resolution100ns {
		case winner.Requested:
			winnerLat = append(winnerLat, p.Running()...)
		case r.Rows[max(r.Floor, 0)].Requested:
			floorLat = append(floorLat, p.Running()...)
		}
	}
	if len(winnerLat) == 0 {
		return
	}
	w := stats.Summarize(winnerLat)
	r.RecheckWinner = &w
	stable := passes(winnerLat, w, winner.Granted) && abs(w.P50-winner.Summary.P50) <= RecheckToleranceNs
	if len(floorLat) > 0 {
		f := stats.Summarize(floorLat)
		r.RecheckFloor = &f
		// The winner must still beat (or match) the floor it was chosen over.
		if winner.Summary.P50 < r.Rows[r.Floor].Summary.P50-BandToleranceNs && w.P50 > f.P50-BandToleranceNs {
			stable = false
		}
	}
	r.Stability = Unstable
	if stable {
		r.Stability = Stable
	}
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// Usable reports whether anything could be judged: an error names what
// went wrong otherwise.
func (r *Result) Usable() error {
	if r.Floor < 0 {
		if d := r.Discarded; d != nil && len(r.Rows) == 0 {
			return fmt.Errorf("the timer period changed while every candidate was measured (seen %s ms; %d points, %d samples left out): close what raises the timer and run again",
				periodsMS(d.PeriodsSeen), d.Points, d.Samples)
		}
		if r.HeldElsewhere != 0 {
			return fmt.Errorf("another process holds the timer at %s ms: every candidate coarser than it measured that period, not its own, and nothing usable remains: %s",
				timerinfo.FormatPeriodMS(r.HeldElsewhere), HeldElsewhereAdvice)
		}
		return fmt.Errorf("no candidate was measured")
	}
	return nil
}

func periodsMS(periods []uint32) string {
	out := make([]string, len(periods))
	for i, p := range periods {
		out[i] = timerinfo.FormatPeriodMS(p)
	}
	return strings.Join(out, ", ")
}
