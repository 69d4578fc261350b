package stats

import "math"

// The noise of a percentile and of a share, so that a judgement can tell a
// difference between two settings from the run-to-run scatter of one.
//
// A nearest-rank percentile of n samples is an order statistic. Without
// assuming any distribution, the rank of the true q-quantile among n samples
// is binomial (n, q): about 95 % of the time it lies within
// z = 1.96 standard deviations, sqrt(n q (1-q)), of n q. The values at those
// two ranks bound the percentile (the distribution-free confidence interval
// of a quantile; Conover, Practical Nonparametric Statistics, 3rd ed., §3.2),
// and half the interval over z is its standard error.
// It needs no resampling, so a judgement that uses it stays a pure,
// repeatable function of the samples.

// z95 is the two-sided 95 % point of the normal distribution.
const z95 = 1.959964

// PercentileSE is the standard error of the nearest-rank p-th percentile
// (0 < p < 100) of ascending data, from the distribution-free 95 %
// interval of its rank. It is 0 for fewer than two samples.
func PercentileSE(sorted []int64, p float64) float64 {
	if len(sorted) < 2 {
		return 0
	}
	lo, hi := percentileRanks(len(sorted), p)
	return float64(sorted[hi-1]-sorted[lo-1]) / (2 * z95)
}

// percentileRanks are the 1-based ranks whose order statistics bound the
// distribution-free 95 % interval of the p-th percentile of n samples,
// clamped to the samples.
func percentileRanks(n int, p float64) (lo, hi int) {
	q := p / 100
	spread := z95 * math.Sqrt(float64(n)*q*(1-q))
	lo = min(max(int(math.Floor(float64(n)*q-spread)), 1), n)
	hi = min(max(int(math.Ceil(float64(n)*q+spread)), 1), n)
	return lo, hi
}

// Interval is an estimate in ns with its confidence interval.
type Interval struct {
	Estimate float64 `json:"ns"`
	Lo       float64 `json:"lo_ns"`
	Hi       float64 `json:"hi_ns"`
	// Coverage is the probability that the interval holds the true
	// figure: for a percentile the exact one of its order statistics
	// (binomial, distribution-free), for a difference the nominal level.
	// When OneSided it is Lo's alone.
	Coverage float64 `json:"coverage"`
	// OneSided is set when the samples cannot bound the figure from above
	// at the level asked (a p99 of fewer than about 300 samples): only Lo
	// is a bound, and Hi is the largest sample.
	OneSided bool `json:"one_sided,omitempty"`
	// Unbounded is set when the samples bound the figure at neither end at
	// the level asked (a difference of two p99s of a few hundred samples
	// each): Lo and Hi are then the widest the samples span, and Coverage
	// is 0.
	Unbounded bool `json:"unbounded,omitempty"`
}

// PercentileCIAt is the nearest-rank p-th percentile of ascending data
// with its distribution-free interval at level 1 − alpha: the order
// statistics X(l) and X(h) for which the count B of samples below the true
// percentile, binomial (n, p/100), puts at most alpha/2 on either side
// (X(l) > truth when B < l, X(h) < truth when B ≥ h). Coverage is then
// P(l ≤ B < h), exactly. Where no rank is high enough (the largest sample
// is below a true p99 with probability 0.99^n, 13 % at n = 200, more than
// alpha/2) the interval is one-sided at 1 − alpha: a lower bound, with Hi
// the largest sample and no claim on it. Ties only widen the coverage.
func PercentileCIAt(sorted []int64, p float64, alpha float64) Interval {
	n := len(sorted)
	if n == 0 {
		return Interval{}
	}
	q := p / 100
	cdf := binomialCDF(n, q) // cdf[k] = P(B ≤ k)
	est := float64(Percentile(sorted, p))
	// lower(a) is the highest rank l with P(B < l) ≤ a, 0 for none.
	lower := func(a float64) int {
		l := 0
		for l < n && cdf[l] <= a {
			l++
		}
		return l
	}
	// upper(a) is the lowest rank h with P(B ≥ h) ≤ a, n+1 for none.
	upper := func(a float64) int {
		h := n
		for h >= 1 && 1-cdf[h-1] <= a {
			h--
		}
		return h + 1
	}
	lo, hi := lower(alpha/2), upper(alpha/2)
	switch {
	case lo >= 1 && hi <= n:
		return Interval{Estimate: est, Lo: float64(sorted[lo-1]), Hi: float64(sorted[hi-1]), Coverage: cdf[hi-1] - cdf[lo-1]}
	case lo >= 1 || lower(alpha) >= 1:
		lo = lower(alpha)
		return Interval{Estimate: est, Lo: float64(sorted[lo-1]), Hi: float64(sorted[n-1]), Coverage: 1 - cdf[lo-1], OneSided: true}
	}
	// No lower bound either (a low percentile of very few samples): the
	// range of the samples, with the probability it holds the truth.
	return Interval{Estimate: est, Lo: float64(sorted[0]), Hi: float64(sorted[n-1]), Coverage: cdf[n-1] - cdf[0]}
}

// binomialCDF is P(B ≤ k) for k = 0..n, B binomial (n, q), from the
// probabilities in logs so that large n neither overflows nor underflows.
func binomialCDF(n int, q float64) []float64 {
	out := make([]float64, n+1)
	if q <= 0 || q >= 1 {
		for k := range out {
			if q <= 0 || k == n {
				out[k] = 1
			}
		}
		return out
	}
	lq, lr := math.Log(q), math.Log1p(-q)
	ln, _ := math.Lgamma(float64(n + 1))
	sum := 0.0
	for k := 0; k <= n; k++ {
		lk, _ := math.Lgamma(float64(k + 1))
		lnk, _ := math.Lgamma(float64(n - k + 1))
		sum += math.Exp(ln - lk - lnk + float64(k)*lq + float64(n-k)*lr)
		out[k] = min(sum, 1)
	}
	out[n] = 1
	return out
}

// MedianDiffCI is the difference a − b of two independent samples'
// (ascending) medians with its 95 % interval (MedianDiffCIAt).
func MedianDiffCI(a, b []int64) Interval {
	return medianDiff(a, b, z95, 0.05)
}

// MedianDiffCIAt is the difference a − b of two independent samples'
// (ascending) medians with its interval at level 1 − alpha: Price and
// Bonett's interval for a difference of medians (Journal of Statistical
// Computation and Simulation 72(2), 2002), which takes each median's
// standard error from its distribution-free interval (PercentileSE) and
// combines the two as independent errors. It needs no resampling, so a
// judgement built on it is a pure, repeatable function of the samples.
// Its coverage is nominal: simulated, it holds 94-96 % at 95 % for
// continuous samples of 200 to 1000 (BENCHMARKS.md).
//
// It assumes the samples continuous: where few distinct values lie
// within either median's own interval (fewer than minDistinct, as when
// waits are quantised to 100 ns or to a tick), the sample median jumps
// from one value to the next and the standard error is no guide (a
// nominal 95 % held the truth half the time). There it is
// PercentileDiffBounds, distribution-free and conservative, and Coverage
// says so.
//
// It is for medians only: applied to a p99 of a few hundred samples the
// same construction held 52-92 % for a nominal 95 % (the largest sample
// cuts the standard error short, and a tail of a few waits is lumpy);
// PercentileDiffBounds bounds those.
func MedianDiffCIAt(a, b []int64, alpha float64) Interval {
	return medianDiff(a, b, math.Sqrt2*math.Erfinv(1-alpha), alpha)
}

func medianDiff(a, b []int64, z, alpha float64) Interval {
	if len(a) == 0 || len(b) == 0 {
		return Interval{}
	}
	if lumpy(a, 50) || lumpy(b, 50) {
		return PercentileDiffBounds(a, b, 50, alpha)
	}
	d := float64(Percentile(a, 50) - Percentile(b, 50))
	half := z * math.Hypot(PercentileSE(a, 50), PercentileSE(b, 50))
	return Interval{Estimate: d, Lo: d - half, Hi: d + half, Coverage: 1 - alpha}
}

// minDistinct is how many distinct values the distribution-free 95 %
// interval of a percentile must hold for its width to give a standard
// error: with fewer, the samples are quantised on the scale of the
// percentile's own noise.
const minDistinct = 10

// lumpy reports whether ascending data hold fewer than minDistinct
// distinct values within the 95 % interval of their p-th percentile.
// Identical samples are not lumpy: they have no noise to misjudge.
func lumpy(sorted []int64, p float64) bool {
	if len(sorted) < 2 || sorted[0] == sorted[len(sorted)-1] {
		return false
	}
	lo, hi := percentileRanks(len(sorted), p)
	distinct := 1
	for i := lo; i < hi && distinct < minDistinct; i++ {
		if sorted[i] != sorted[i-1] {
			distinct++
		}
	}
	return distinct < minDistinct
}

// PercentileDiffBounds is the difference a − b of two samples' (ascending)
// p-th percentiles with the distribution-free interval that follows from
// their own (PercentileCIAt, each at 1 − alpha/2): from a's lower end less
// b's upper end to a's upper end less b's lower end. Both hold, and with
// them the difference, with probability at least 1 − alpha whatever the
// distributions (Bonferroni), and Coverage is that bound from their exact
// coverages. Where either percentile has no two-sided interval at that
// level (a p99 of fewer than about 440 samples) the difference has none:
// Unbounded, with Lo and Hi the difference of the samples' ranges.
func PercentileDiffBounds(a, b []int64, p, alpha float64) Interval {
	if len(a) == 0 || len(b) == 0 {
		return Interval{}
	}
	ia, ib := PercentileCIAt(a, p, alpha/2), PercentileCIAt(b, p, alpha/2)
	d := ia.Estimate - ib.Estimate
	two := func(iv Interval) bool { return !iv.OneSided && iv.Coverage >= 1-alpha/2 }
	if !two(ia) || !two(ib) {
		return Interval{Estimate: d, Lo: float64(a[0] - b[len(b)-1]), Hi: float64(a[len(a)-1] - b[0]), Unbounded: true}
	}
	return Interval{Estimate: d, Lo: ia.Lo - ib.Hi, Hi: ia.Hi - ib.Lo, Coverage: ia.Coverage + ib.Coverage - 1}
}

// DiffersBeyond reports whether two estimates a and b, with standard errors
// seA and seB, differ by more than the larger of floor and two standard
// errors of their difference: a difference within it could be noise, or is
// too small to matter.
func DiffersBeyond(a, b, seA, seB, floor float64) bool {
	return math.Abs(a-b) > max(floor, 2*math.Hypot(seA, seB))
}

// ShareSE is the standard error of a share observed over n samples.
func ShareSE(share float64, n int) float64 {
	if n < 1 {
		return 0
	}
	return math.Sqrt(share * (1 - share) / float64(n))
}

// ShareAbove reports whether a share observed over n samples is
// significantly above limit: by more than two standard errors of a share
// at the limit. A share that is truly at the limit then passes about 97 %
// of the time instead of half of it, so that rows sitting on a gate do not
// pass or fail by chance.
func ShareAbove(share, limit float64, n int) bool {
	if n < 1 {
		return false
	}
	return share > limit+2*ShareSE(limit, n)
}
