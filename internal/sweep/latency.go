package sweep

import (
	"github.com/tickscope/tickscope/internal/stats"
)

// A difference a user cannot notice is a share of what the bench tunes,
// not a fixed number of µs:
//   - the Windows bench tunes the timer period, which moves the whole wait
//     by ticks, and judges the wait's latency (TickTune's gates are on its
//     p50 and p95): 1 % of it, 10 µs for a 1 ms Sleep, which is less than
//     half the span of one band (BandToleranceNs);
//   - the Linux bench tunes the timer slack, which moves only the part of
//     the wait past its deadline: 5 % of that lateness, 1.4 µs for a p50
//     lateness of 28 µs. A difference of a few hundred ns there is below
//     anything a program could act on, and a 1 ms wait's 10 µs was a third
//     of the whole lateness being tuned.
//
// A difference is noticeable only when it is beyond this and beyond the
// noise of the two samples (noticeablyAbove).
const (
	NoticeableLatencyShare  = 0.01
	NoticeableLatenessShare = 0.05
)

// IntervalMethod names how every interval of a judgement is computed, for
// the output to say: each percentile's from its order statistics, the p50
// margin from the two p50s' standard errors, the p99 margin from the two
// p99s' intervals, all widened for the selection (confidenceOf).
const IntervalMethod = "95 % from the order statistics (distribution-free, exact binomial coverage), widened for the candidates the pick was chosen among (Bonferroni); the p50 margin by Price and Bonett's interval for medians (from the two p50s' intervals where the waits are quantised), the p99 margin from the two p99s' intervals"

// Confidence is what the user acts on with its uncertainty: the
// recommended setting's p50 and p99 of the latency, and its margin over
// the runner-up (the pick were the recommended setting not measured).
type Confidence struct {
	Method string `json:"method"`
	// Candidates is how many settings (Windows: bands) the pick was
	// chosen among: the intervals are widened for it.
	Candidates int            `json:"candidates"`
	P50        stats.Interval `json:"p50"`
	P99        stats.Interval `json:"p99"`
	// RunnerUp is a row index, -1 when nothing else qualifies.
	RunnerUp int `json:"runner_up_row"`
	// MarginP50 and MarginP99 are the runner-up's figure minus the
	// recommended one's: positive where the recommendation is lower.
	MarginP50 *stats.Interval `json:"margin_p50,omitempty"`
	MarginP99 *stats.Interval `json:"margin_p99,omitempty"`
}

// confidenceOf is the confidence in the recommended row's samples against
// the runner-up's (nil when there is none), both ascending, when the pick
// was chosen among candidates settings.
//
// The pick is the candidate whose figures came out best, so its own are
// biased (the lowest observed p99 among equivalent settings is low by
// chance), and an interval of its samples alone does not hold its level.
// Each interval is therefore taken so that it would hold for every
// candidate at once with 95 % (Bonferroni): the pick's p50 and p99, and
// every candidate's p99 that the p99 margin is bounded from, at
// 1 − 0.05/candidates; the p50 margin, one of candidates·(candidates−1)/2
// pairs, at 1 − 0.05 over the pairs. The re-check's samples would be free
// of the selection, but there are half as many, the Windows re-check does
// not measure the runner-up, and a stopped bench has none; the sweep's
// samples serve every bench and `analyze` alike.
func confidenceOf(recommended []int64, runnerUpRow int, runnerUp []int64, candidates int) *Confidence {
	k := max(candidates, 1)
	alpha := 0.05 / float64(k)
	c := &Confidence{Method: IntervalMethod, Candidates: k, RunnerUp: -1,
		P50: stats.PercentileCIAt(recommended, 50, alpha), P99: stats.PercentileCIAt(recommended, 99, alpha)}
	if runnerUpRow >= 0 && len(runnerUp) > 0 {
		c.RunnerUp = runnerUpRow
		pairs := max(k*(k-1)/2, 1)
		// Price and Bonett's interval holds a difference of medians of
		// continuous waits near its level, not one of p99s
		// (TestIntervalCoverage): the p99 margin is bounded from the two
		// p99s' own intervals instead, each at 1 − alpha.
		p50 := stats.MedianDiffCIAt(runnerUp, recommended, 0.05/float64(pairs))
		p99 := stats.PercentileDiffBounds(runnerUp, recommended, 99, min(2*alpha, 0.05))
		c.MarginP50, c.MarginP99 = &p50, &p99
	}
	return c
}

// candidate is a setting (Linux) or a band's middle row (Windows) as the
// latency pick sees it: its samples, ascending, their p50 and p99, and the
// share of its waits an extra tick or more late.
type candidate struct {
	index    int
	sorted   []int64
	p50, p99 float64
	late     float64
}

func newCandidate(index int, sorted []int64, late float64) candidate {
	return candidate{index: index, sorted: sorted, late: late,
		p50: float64(stats.Percentile(sorted, 50)), p99: float64(stats.Percentile(sorted, 99))}
}

// choice is the latency pick and how it saw each candidate (slices in the
// candidates' order).
type choice struct {
	// pick is a candidate's index (its index field), -1 when there are
	// no candidates.
	pick int
	// best is the position of the lowest p50 among the undominated.
	best int
	// noticeableNs is the smallest p50 difference that decided.
	noticeableNs float64
	// dominatedBy is, per candidate, the position of one that beats it
	// (-1 for none).
	dominatedBy []int
	// vsBest is each undominated candidate's p50 minus the lowest p50's,
	// with its interval (pairAlpha); equivalent marks those not
	// noticeably above it.
	vsBest     []stats.Interval
	equivalent []bool
}

// pairAlpha is the level at which the latency pick compares two of k
// candidates' p50s: 0.05 over the k(k−1)/2 pairs (Bonferroni), so that
// all the pairs' intervals hold at once with at least 95 %.
//
// The equivalence marks compare every candidate with the lowest p50,
// and which candidate that is is itself chosen by the samples: the
// lowest of several noisy p50s is low by chance (the winner's curse),
// so an interval of a difference from it taken at 95 % as if the best
// were fixed in advance is off-centre. Widening for the k−1 differences
// printed is not enough either: the best could have been any of the k,
// so the differences printed are k−1 of the k(k−1)/2 pairs, which pair
// depending on the samples. Only an interval that holds for every pair
// at once holds for the pairs the samples then pick out (simulated,
// BENCHMARKS.md: among ten identical settings the intervals, each at
// 95 %, held together in 72-75 % of benches). Those are the marks a user
// reads as one statement ("none is noticeably slower").
//
// Price and Bonett's interval is taken at this level rather than
// Tukey's studentized range for the same family: it is the construction
// every difference of p50s here uses (the pick's p50 margin over the
// runner-up is one of these pairs, widened the same way), it needs no
// equal variances, and Bonferroni's critical value is only 3 % larger
// (3.26 against q/√2 = 3.16 at ten candidates, 3.65 against 3.54 at
// twenty).
func pairAlpha(k int) float64 {
	return 0.05 / float64(max(k*(k-1)/2, 1))
}

// beats reports whether a's p50 is lower than b's beyond the noise (the
// upper end of the interval of a − b at alpha below zero) and a's p99 is
// lower than b's in the samples. The p99's part claims only what was
// observed: no interval of a difference of two p99s of a few hundred
// samples holds its level (Price and Bonett's construction held 52-92 %
// for its nominal 95 %, BENCHMARKS.md), and the distribution-free one
// needs about 440 samples a setting for either end.
//
// chooseLatency tests every pair of its k candidates, so alpha is
// pairAlpha(k): with each pair at 95 %, one of ten identical settings
// would be marked dominated in half the benches (BENCHMARKS.md). Holm's
// step-down would reject more pairs at the same family-wise level, but
// its tests have no intervals to match them; the pick prints the
// interval of each difference it compared, and one interval per pair
// keeps what is printed and what was decided the same.
func beats(a, b candidate, alpha float64) bool {
	return a.p99 < b.p99 && stats.MedianDiffCIAt(a.sorted, b.sorted, alpha).Hi < 0
}

// noticeablyAbove reports whether a difference is noticeable: the lower
// end of its 95 % interval is above noticeable (a one-sided test of a
// minimum effect, at 2.5 %). A difference the samples cannot tell from
// one under noticeable decides nothing.
func noticeablyAbove(d stats.Interval, noticeable float64) bool {
	return d.Lo > noticeable
}

// chooseLatency is the latency pick of both benches. The candidates come
// ordered from the most to the least intrusive setting; origin is what the
// figures are measured from for what a user notices (0 for the Windows
// latency, the delay for the Linux lateness), and share the noticeable
// share of it.
//
//  1. A candidate another beats on p50 beyond the noise and on p99 (beats,
//     at pairAlpha: every pair is tested) is out, whatever else it has for
//     it: it is worse on every measure the user was shown.
//  2. Of the rest, those whose p50 is not noticeably above the lowest p50
//     (noticeablyAbove, with share of the lowest p50) are equivalent:
//     each difference from the lowest is taken at pairAlpha, which
//     holds although the lowest is chosen by the same samples.
//  3. Among them the lowest p99 wins, unless others are within share of
//     it: a p99 of a few hundred samples is too noisy for an interval to
//     separate two tails (its interval reaches the worst wait), but
//     between settings whose p50s are equivalent, taking the lower
//     observed tail costs nothing and avoids a tail that may be real.
//  4. Among those, the lowest share of waits a tick late, unless others
//     are within the noise of it; and among those the least intrusive.
func chooseLatency(cands []candidate, origin, share float64) choice {
	ch := choice{pick: -1, dominatedBy: make([]int, len(cands)), vsBest: make([]stats.Interval, len(cands)), equivalent: make([]bool, len(cands))}
	if len(cands) == 0 {
		return ch
	}
	alpha := pairAlpha(len(cands))
	var open []int
	for i := range cands {
		ch.dominatedBy[i] = -1
		for j := range cands {
			if j != i && beats(cands[j], cands[i], alpha) {
				ch.dominatedBy[i] = j
				break
			}
		}
		if ch.dominatedBy[i] < 0 {
			open = append(open, i)
		}
	}
	lowest := func(set []int, value func(candidate) float64) int {
		best := set[0]
		for _, i := range set[1:] {
			if value(cands[i]) < value(cands[best]) {
				best = i
			}
		}
		return best
	}
	noticeable := func(figure float64) float64 { return share * max(figure-origin, 0) }
	best := lowest(open, func(c candidate) float64 { return c.p50 })
	ch.best, ch.noticeableNs = best, noticeable(cands[best].p50)
	var same []int
	for _, i := range open {
		ch.vsBest[i] = stats.MedianDiffCIAt(cands[i].sorted, cands[best].sorted, alpha)
		if !noticeablyAbove(ch.vsBest[i], ch.noticeableNs) {
			ch.equivalent[i] = true
			same = append(same, i)
		}
	}
	tailBest := lowest(same, func(c candidate) float64 { return c.p99 })
	var tail []int
	for _, i := range same {
		if cands[i].p99-cands[tailBest].p99 <= noticeable(cands[tailBest].p99) {
			tail = append(tail, i)
		}
	}
	lateBest := cands[lowest(tail, func(c candidate) float64 { return c.late })]
	var late []int
	for _, i := range tail {
		c := cands[i]
		if !stats.DiffersBeyond(c.late, lateBest.late, stats.ShareSE(c.late, len(c.sorted)), stats.ShareSE(lateBest.late, len(lateBest.sorted)), 0) {
			late = append(late, i)
		}
	}
	ch.pick = cands[late[len(late)-1]].index
	return ch
}

// mark is how the latency pick saw one candidate, for the output: the
// position it has in the result (candidate.index), and either the
// candidate that dominates it or its p50's difference from the lowest
// (nil for the lowest itself) and whether that made it equivalent (only
// said when more than one was).
type mark struct {
	index       int
	equivalent  bool
	vsBest      *stats.Interval
	dominatedBy *int
}

func (ch *choice) marks(cands []candidate) []mark {
	equivalent := 0
	for _, e := range ch.equivalent {
		if e {
			equivalent++
		}
	}
	out := make([]mark, len(cands))
	for i, c := range cands {
		out[i].index = c.index
		if by := ch.dominatedBy[i]; by >= 0 {
			out[i].dominatedBy = &cands[by].index
			continue
		}
		if i != ch.best {
			out[i].vsBest = &ch.vsBest[i]
		}
		out[i].equivalent = ch.equivalent[i] && equivalent > 1
	}
	return out
}

// without is cands less the one whose index is skip.
func without(cands []candidate, skip int) []candidate {
	out := make([]candidate, 0, len(cands))
	for _, c := range cands {
		if c.index != skip {
			out = append(out, c)
		}
	}
	return out
}
