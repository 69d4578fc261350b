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

// Interval is an estimate in ns with its 95 % confidence interval.
type Interval struct {
	Estimate float64 `json:"ns"`
	Lo       float64 `json:"lo_ns"`
	Hi       float64 `json:"hi_ns"`
}

// PercentileCI is the nearest-rank p-th percentile of ascending data with
// its distribution-free 95 % interval: the order statistics between whose
// ranks the true percentile's rank lies 95 % of the time. Where the
// interval's rank would pass the last sample (a p99 of a few hundred
// samples) it ends at the largest sample: the interval then says only that
// the percentile is no more than the worst wait seen.
func PercentileCI(sorted []int64, p float64) Interval {
	if len(sorted) == 0 {
		return Interval{}
	}
	lo, hi := percentileRanks(len(sorted), p)
	return Interval{Estimate: float64(Percentile(sorted, p)), Lo: float64(sorted[lo-1]), Hi: float64(sorted[hi-1])}
}

// PercentileDiffCI is the difference a − b of two independent samples'
// (ascending) p-th percentiles with its 95 % interval: Price and Bonett's
// interval for a difference of medians (Journal of Statistical Computation
// and Simulation 72(2), 2002), which takes each median's standard error
// from its distribution-free interval (PercentileSE) and combines the two
// as independent errors; for p other than 50, the same construction on
// that percentile's order statistics. It needs no resampling, so a
// judgement built on it is a pure, repeatable function of the samples.
func PercentileDiffCI(a, b []int64, p float64) Interval {
	if len(a) == 0 || len(b) == 0 {
		return Interval{}
	}
	d := float64(Percentile(a, p) - Percentile(b, p))
	half := z95 * math.Hypot(PercentileSE(a, p), PercentileSE(b, p))
	return Interval{Estimate: d, Lo: d - half, Hi: d + half}
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
