package sweep

import (
	"context"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/stats"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// SlackGrid is the Linux bench's candidates: the measuring thread's timer
// slack from 1 ns to 500 µs (ten times the 50 µs default), and, when
// dmaHold, each again with /dev/cpu_dma_latency held at 0.
func SlackGrid(dmaHold bool) []timerinfo.Setting {
	slacks := []time.Duration{1, time.Microsecond, 2 * time.Microsecond, 5 * time.Microsecond, 10 * time.Microsecond,
		20 * time.Microsecond, 50 * time.Microsecond, 100 * time.Microsecond, 200 * time.Microsecond, 500 * time.Microsecond}
	var out []timerinfo.Setting
	for _, hold := range []bool{false, true} {
		if hold && !dmaHold {
			break
		}
		for _, s := range slacks {
			setting := timerinfo.Setting{SlackNs: int64(s)}
			if hold {
				zero := int32(0)
				setting.CPUDMALatencyUs = &zero
			}
			out = append(out, setting)
		}
	}
	return out
}

// RunSettings measures every setting to the full sample count with method,
// in interleaved chunks (so that drift is shared, not mistaken for a
// difference between settings), then re-checks the pick against the
// finest setting. The candidates are few: no adaptive design is needed.
func (r *Runner) RunSettings(ctx context.Context, method string, settings []timerinfo.Setting, judge func([]rawfile.Point) int) ([]rawfile.Point, error) {
	r.rng = rand.New(rand.NewPCG(r.Plan.Seed, 0x736c61636b))
	r.method = method
	r.resetDiscards()
	groups := make([]group, len(settings))
	all := make([]int, len(settings))
	for i, s := range settings {
		groups[i].point.Requested = s
		all[i] = i
	}
	if err := r.interleave(ctx, groups, all, r.Plan.Samples); err != nil {
		return result(ctx, r.finish(groups, nil), err)
	}
	pick := judge(r.finish(groups, nil))
	if pick < 0 {
		return result(ctx, r.finish(groups, nil), nil)
	}
	rechecks, err := r.recheckRows(ctx, groups, []int{pick, 0})
	return result(ctx, r.finish(groups, rechecks), err)
}

// SlackRow is one measured Linux setting.
type SlackRow struct {
	Setting  timerinfo.Setting `json:"setting"`
	Summary  stats.Summary     `json:"summary"`
	Lateness stats.Lateness    `json:"lateness"`
	Pass     bool              `json:"pass"`
	// P50SE is the standard error of p50 (stats.PercentileSE): the noise
	// two settings' p50s are compared against.
	P50SE float64 `json:"p50_se_ns"`
	// NotRunning counts the samples taken while the process was not
	// running, left out of the summary and the gates.
	NotRunning int `json:"not_running,omitempty"`
	// Equivalent marks the settings whose p50 was not noticeably above
	// the best's (chooseLatency) when the latency pick chose among them.
	Equivalent bool `json:"equivalent,omitempty"`
	// P50VsBest is, for the latency pick's other candidates, this p50
	// minus the lowest candidate's, with its interval: the test that found
	// it equivalent or not. The intervals of all the settings hold at once
	// with 95 % (pairAlpha: the lowest is chosen by the samples).
	P50VsBest *stats.Interval `json:"p50_vs_best,omitempty"`
	// DominatedBy is the index of a setting whose p50 is lower than this
	// one's beyond the noise (at pairAlpha, as every pair is tested) and
	// whose p99 is lower: the latency pick never takes it.
	DominatedBy *int `json:"dominated_by,omitempty"`

	sorted []int64
}

// SlackResult is the Linux bench's judgement.
type SlackResult struct {
	Preferences   Preferences    `json:"preferences"`
	Rows          []SlackRow     `json:"rows"`
	Recommended   int            `json:"recommended_row"`
	FellBack      bool           `json:"fell_back_to_latency"`
	Stability     string         `json:"stability"`
	RecheckWinner *stats.Summary `json:"recheck_winner,omitempty"`
	Partial       bool           `json:"partial"`
	// NoticeableNs is the smallest difference of p50 lateness the latency
	// pick counted (NoticeableLatenessShare of the lowest); 0 when it did
	// not choose.
	NoticeableNs float64 `json:"noticeable_ns,omitempty"`
	// Confidence is the recommended setting's figures and its margin over
	// the runner-up, with their intervals.
	Confidence *Confidence `json:"confidence,omitempty"`
	// NotRunning is what the sweep saw of the process not running; its
	// samples are left out of every row and the re-check.
	NotRunning *NotRunning `json:"not_running,omitempty"`
}

// JudgeSlack recommends a Linux setting. latency: among the settings that
// pass the gates (interference ≤ 2 %, p95 ≤ 2.5 ms), the pick of
// chooseLatency: never a setting another beats on p50 beyond the noise
// and on p99; of the rest the lowest p50, except that settings whose p50 is
// not noticeably above it (NoticeableLatenessShare of the lowest p50
// lateness, beyond the noise) are equivalent, and among those the lowest
// p99 (within the same share), then the lowest interference (the waits a
// 1 ms tick or more late: Linux's high-resolution timers have no tick of
// their own, and 1 ms is the finest a kernel's HZ gives), then the least
// intrusive setting (no DMA hold, the largest slack) wins. power: the
// largest slack, preferring no DMA hold, whose p99 lateness is within
// prefs.BudgetLateness; the latency pick when none is.
//
// The Windows bench's consistency gate (ConsistencyNs) is not applied: it
// guards against waits that end a whole tick late, and Linux's
// high-resolution timers have no tick. A slack spreads wake-ups over up to
// its own width instead, which the lateness figures show directly and the
// power pick bounds at p99.
func JudgeSlack(points []rawfile.Point, delayNs int64, prefs Preferences) *SlackResult {
	prefs.BudgetP50, prefs.BudgetP95 = 0, 0 // the Windows bench's budgets
	r := &SlackResult{Preferences: prefs, Recommended: -1, Stability: NotRechecked, NotRunning: NotRunningOf(points)}
	var rechecks []*rawfile.Point
	for i := range points {
		p := &points[i]
		r.Partial = r.Partial || p.Stopped
		if p.Phase == rawfile.PhaseRecheck {
			rechecks = append(rechecks, p)
			continue
		}
		sorted := slices.Clone(p.Running())
		slices.Sort(sorted)
		s := stats.SummarizeSorted(sorted)
		r.Rows = append(r.Rows, SlackRow{
			Setting: p.Requested, Summary: s, Lateness: stats.LatenessOf(s, delayNs),
			Pass:  s.Count > 0 && s.Interference <= GateMaxInterference && s.P95 <= GateMaxP95Ns,
			P50SE: stats.PercentileSE(sorted, 50), NotRunning: p.LeftOut(), sorted: sorted,
		})
	}
	var cands []candidate
	for i, row := range r.Rows {
		if row.Pass {
			cands = append(cands, newCandidate(i, row.sorted, row.Summary.Interference))
		}
	}
	// Most intrusive first: a DMA hold, then the smallest slack.
	sort.SliceStable(cands, func(i, j int) bool { return better(r.Rows[cands[j].index].Setting, r.Rows[cands[i].index].Setting) })
	var latency choice
	r.Recommended, latency, r.FellBack = pickSlack(r.Rows, cands, delayNs, prefs, -1)
	if latency.pick >= 0 {
		r.NoticeableNs = latency.noticeableNs
		r.markRows(cands, &latency)
	}
	if r.Recommended >= 0 {
		runnerUp, _, _ := pickSlack(r.Rows, without(cands, r.Recommended), delayNs, prefs, r.Recommended)
		var runnerUpSorted []int64
		if runnerUp >= 0 {
			runnerUpSorted = r.Rows[runnerUp].sorted
		}
		r.Confidence = confidenceOf(r.Rows[r.Recommended].sorted, runnerUp, runnerUpSorted, len(cands))
	}
	if r.Recommended >= 0 && len(rechecks) > 0 {
		want := r.Rows[r.Recommended].Setting
		var lat []int64
		for _, p := range rechecks {
			if sameSetting(p.Requested, want) {
				lat = append(lat, p.Running()...)
			}
		}
		if len(lat) > 0 {
			w := stats.Summarize(lat)
			r.RecheckWinner = &w
			r.Stability = Unstable
			if abs(w.P50-r.Rows[r.Recommended].Summary.P50) <= max(RecheckToleranceNs/4, r.Rows[r.Recommended].Summary.P50/100) {
				r.Stability = Stable
			}
		}
	}
	return r
}

// pickSlack is the Linux pick by preference among the candidates (rows
// that pass the gates, most intrusive first), leaving out row skip (-1:
// none): the row, and the latency pick's view of them when it made the
// pick (its pick is -1 otherwise).
func pickSlack(rows []SlackRow, cands []candidate, delayNs int64, prefs Preferences, skip int) (int, choice, bool) {
	latency := chooseLatency(cands, float64(delayNs), NoticeableLatenessShare)
	if prefs.Prefer != "power" {
		return latency.pick, latency, false
	}
	power := -1
	for i, row := range rows {
		if i == skip || !row.Pass || row.Lateness.P99 > prefs.BudgetLateness {
			continue
		}
		if power < 0 || better(row.Setting, rows[power].Setting) {
			power = i
		}
	}
	if power >= 0 {
		return power, choice{pick: -1}, false
	}
	return latency.pick, latency, latency.pick >= 0
}

// markRows records how the latency pick saw each setting it chose among.
func (r *SlackResult) markRows(cands []candidate, ch *choice) {
	for _, m := range ch.marks(cands) {
		row := &r.Rows[m.index]
		row.Equivalent, row.P50VsBest, row.DominatedBy = m.equivalent, m.vsBest, m.dominatedBy
	}
}

// JudgeSlackFile judges a Linux bench's raw file: bench and analyze both
// judge through it.
func JudgeSlackFile(f *rawfile.File, prefs Preferences) *SlackResult {
	return JudgeSlack(f.Points, f.DelayNs, prefs)
}

// better says whether a is the more power-friendly setting: no DMA hold
// first, then the larger slack.
func better(a, b timerinfo.Setting) bool {
	if (a.CPUDMALatencyUs == nil) != (b.CPUDMALatencyUs == nil) {
		return a.CPUDMALatencyUs == nil
	}
	return a.SlackNs > b.SlackNs
}

func sameSetting(a, b timerinfo.Setting) bool {
	return a.SlackNs == b.SlackNs && a.Resolution100ns == b.Resolution100ns &&
		(a.CPUDMALatencyUs == nil) == (b.CPUDMALatencyUs == nil) &&
		(a.CPUDMALatencyUs == nil || *a.CPUDMALatencyUs == *b.CPUDMALatencyUs)
}
