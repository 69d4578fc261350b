package sweep

import (
	"context"
	"math/rand/v2"
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
	// Equivalent marks the settings whose p50 was within NoticeableNs (or
	// the noise) of the best's when the latency pick chose among them.
	Equivalent bool `json:"equivalent,omitempty"`
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
}

// JudgeSlack recommends a Linux setting. latency: among the settings that
// pass the gates (interference ≤ 2 %, p95 ≤ 2.5 ms), the lowest p50, except
// that settings whose p50s differ by no more than NoticeableNs or the noise
// are equivalent, and among those the lowest p99 (within the same
// tolerance), then the lowest interference (the waits a 1 ms tick or more
// late: Linux's high-resolution timers have no tick of their own, and 1 ms
// is the finest a kernel's HZ gives), then the least intrusive setting (no
// DMA hold, the largest slack) wins. power: the largest slack, preferring
// no DMA hold, whose p99 lateness is within prefs.BudgetLateness; the
// latency pick when none is.
//
// The Windows bench's consistency gate (ConsistencyNs) is not applied: it
// guards against waits that end a whole tick late, and Linux's
// high-resolution timers have no tick. A slack spreads wake-ups over up to
// its own width instead, which the lateness figures show directly and the
// power pick bounds at p99.
func JudgeSlack(points []rawfile.Point, delayNs int64, prefs Preferences) *SlackResult {
	prefs.BudgetP50, prefs.BudgetP95 = 0, 0 // the Windows bench's budgets
	r := &SlackResult{Preferences: prefs, Recommended: -1, Stability: NotRechecked}
	var rechecks []*rawfile.Point
	for i := range points {
		p := &points[i]
		r.Partial = r.Partial || p.Stopped
		if p.Phase == rawfile.PhaseRecheck {
			rechecks = append(rechecks, p)
			continue
		}
		s := stats.Summarize(p.Latencies)
		p50SE := p50Noise(p.Latencies)
		r.Rows = append(r.Rows, SlackRow{
			Setting: p.Requested, Summary: s, Lateness: stats.LatenessOf(s, delayNs),
			Pass:  s.Count > 0 && s.Interference <= GateMaxInterference && s.P95 <= GateMaxP95Ns,
			P50SE: p50SE,
		})
	}
	var cands []candidate
	for i, row := range r.Rows {
		if row.Pass {
			s := row.Summary
			cands = append(cands, candidate{index: i, p50: float64(s.P50), p50SE: row.P50SE, p99: float64(s.P99), late: s.Interference, n: s.Count})
		}
	}
	// Most intrusive first: a DMA hold, then the smallest slack.
	sort.SliceStable(cands, func(i, j int) bool { return better(r.Rows[cands[j].index].Setting, r.Rows[cands[i].index].Setting) })
	best, equivalent := chooseEquivalent(cands)
	if len(equivalent) > 1 && prefs.Prefer != "power" {
		for _, i := range equivalent {
			r.Rows[i].Equivalent = true
		}
	}
	r.Recommended = best
	if prefs.Prefer == "power" {
		power := -1
		for i, row := range r.Rows {
			if !row.Pass || row.Lateness.P99 > prefs.BudgetLateness {
				continue
			}
			if power < 0 || better(row.Setting, r.Rows[power].Setting) {
				power = i
			}
		}
		if power >= 0 {
			r.Recommended = power
		} else {
			r.FellBack = best >= 0
		}
	}
	if r.Recommended >= 0 && len(rechecks) > 0 {
		want := r.Rows[r.Recommended].Setting
		var lat []int64
		for _, p := range rechecks {
			if sameSetting(p.Requested, want) {
				lat = append(lat, p.Latencies...)
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
