// Package stats turns wait latencies into the figures tickscope reports:
// percentiles, moments, lateness, interference and a histogram. It is pure:
// no clock, no OS, no I/O.
package stats

import (
	"math"
	"slices"
)

// InterferenceThresholdNs is how far past the median a sample must land to
// count as interference: 1 ms, TickTune's definition (its README), which on
// Windows means "at least one extra tick at a fine period".
const InterferenceThresholdNs = 1_000_000

// Summary describes a set of wait latencies, in ns.
type Summary struct {
	Count  int     `json:"count"`
	Min    int64   `json:"min_ns"`
	P5     int64   `json:"p5_ns"`
	P50    int64   `json:"p50_ns"`
	P90    int64   `json:"p90_ns"`
	P95    int64   `json:"p95_ns"`
	P99    int64   `json:"p99_ns"`
	P999   int64   `json:"p99_9_ns"`
	Max    int64   `json:"max_ns"`
	Mean   float64 `json:"mean_ns"`
	StdDev float64 `json:"stddev_ns"`
	// Interference is the share (0..1) of samples over P50 by more than
	// InterferenceThresholdNs.
	Interference float64 `json:"interference"`
}

// Summarize describes latencies (ns). It sorts a copy, so the caller's
// order (the time series) is kept. An empty input gives the zero Summary.
func Summarize(latencies []int64) Summary {
	if len(latencies) == 0 {
		return Summary{}
	}
	sorted := slices.Clone(latencies)
	slices.Sort(sorted)
	return SummarizeSorted(sorted)
}

// SummarizeSorted is Summarize for input already in ascending order.
func SummarizeSorted(sorted []int64) Summary {
	n := len(sorted)
	if n == 0 {
		return Summary{}
	}
	s := Summary{
		Count: n,
		Min:   sorted[0],
		P5:    Percentile(sorted, 5),
		P50:   Percentile(sorted, 50),
		P90:   Percentile(sorted, 90),
		P95:   Percentile(sorted, 95),
		P99:   Percentile(sorted, 99),
		P999:  Percentile(sorted, 99.9),
		Max:   sorted[n-1],
	}
	// Welford's update keeps the variance exact for long runs of near-equal
	// values, where the naive sum of squares loses its low digits.
	var mean, m2 float64
	for i, v := range sorted {
		x := float64(v)
		delta := x - mean
		mean += delta / float64(i+1)
		m2 += delta * (x - mean)
	}
	s.Mean = mean
	if n > 1 {
		s.StdDev = math.Sqrt(m2 / float64(n-1))
	}
	limit := s.P50 + InterferenceThresholdNs
	over := n - upperBound(sorted, limit)
	s.Interference = float64(over) / float64(n)
	return s
}

// Percentile returns the nearest-rank p-th percentile (0 < p ≤ 100) of
// ascending data: the smallest sample with at least p % of the samples at or
// below it. Every figure reported is therefore a latency that was observed.
func Percentile(sorted []int64, p float64) int64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(n)))
	rank = min(max(rank, 1), n)
	return sorted[rank-1]
}

// upperBound is the index of the first element greater than v.
func upperBound(sorted []int64, v int64) int {
	i, _ := slices.BinarySearchFunc(sorted, v, func(e, t int64) int {
		if e <= t {
			return -1
		}
		return 1
	})
	return i
}

// Lateness is how far past the requested delay the summary's p50 and p99
// landed, in ns. Negative lateness means the wait ended early.
type Lateness struct {
	P50 int64 `json:"p50_ns"`
	P99 int64 `json:"p99_ns"`
}

// LatenessOf gives a summary's lateness against the requested delay (ns).
func LatenessOf(s Summary, requestedNs int64) Lateness {
	return Lateness{P50: s.P50 - requestedNs, P99: s.P99 - requestedNs}
}

// Bin is one histogram bar: samples in [Lo, Hi), or [Lo, ∞) for the
// overflow bin.
type Bin struct {
	Lo       int64 `json:"lo_ns"`
	Hi       int64 `json:"hi_ns"`
	Count    int   `json:"count"`
	Overflow bool  `json:"overflow,omitempty"`
}

// Histogram spreads ascending data over at most bins equal-width bins from
// the minimum to the 99th percentile, and one overflow bin for the 1 % of
// samples past it, so that a few multi-millisecond outliers do not squash
// the shape of the rest into one bar.
func Histogram(sorted []int64, bins int) []Bin {
	n := len(sorted)
	if n == 0 || bins < 1 {
		return nil
	}
	lo, hi := sorted[0], Percentile(sorted, 99)
	// Regular bins cover [lo, hi] exactly; anything above hi overflows.
	width := max((hi-lo+1+int64(bins)-1)/int64(bins), 1)
	out := make([]Bin, 0, bins+1)
	i := 0
	for binLo := lo; binLo <= hi; binLo += width {
		binHi := binLo + width
		count := 0
		for i < n && sorted[i] < binHi && sorted[i] <= hi {
			count++
			i++
		}
		out = append(out, Bin{Lo: binLo, Hi: binHi, Count: count})
	}
	if i < n {
		out = append(out, Bin{Lo: out[len(out)-1].Hi, Hi: sorted[n-1], Count: n - i, Overflow: true})
	}
	return out
}

// LatenessBucketsNs are the upper bounds of the lateness histogram, 1 µs
// to 100 ms in 1-2-5 steps: watch's summary and the Prometheus
// endpoint's classic buckets, so both count a wake-up in the same bucket.
var LatenessBucketsNs = []int64{
	1e3, 2e3, 5e3, 10e3, 20e3, 50e3, 100e3, 200e3, 500e3,
	1e6, 2e6, 5e6, 10e6, 20e6, 50e6, 100e6,
}
