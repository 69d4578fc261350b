package stats_test

import (
	"math"
	"testing"

	"github.com/tickscope/tickscope/internal/stats"
)

func TestPercentile(t *testing.T) {
	data := []int64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
	tests := []struct {
		p    float64
		want int64
	}{
		{0.1, 10}, {10, 10}, {11, 20}, {50, 50}, {90, 90}, {95, 100}, {99.9, 100}, {100, 100},
	}
	for _, tt := range tests {
		if got := stats.Percentile(data, tt.p); got != tt.want {
			t.Errorf("Percentile(p=%v) = %d, want %d", tt.p, got, tt.want)
		}
	}
	if got := stats.Percentile(nil, 50); got != 0 {
		t.Errorf("Percentile(empty) = %d, want 0", got)
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name string
		in   []int64
		want stats.Summary
	}{
		{"empty", nil, stats.Summary{}},
		{"one", []int64{5}, stats.Summary{Count: 1, Min: 5, P5: 5, P50: 5, P90: 5, P95: 5, P99: 5, P999: 5, Max: 5, Mean: 5}},
		{
			// Nine 1 ms waits and one that took an extra 1.5 ms: one sample
			// in ten is interference.
			"interference",
			[]int64{1e6, 1e6, 1e6, 1e6, 1e6, 1e6, 1e6, 1e6, 1e6, 2.5e6},
			stats.Summary{Count: 10, Min: 1e6, P5: 1e6, P50: 1e6, P90: 1e6, P95: 2.5e6, P99: 2.5e6, P999: 2.5e6, Max: 2.5e6, Mean: 1.15e6, Interference: 0.1},
		},
		{
			// Exactly 1 ms over the median is not interference: "more than".
			"threshold",
			[]int64{1e6, 1e6, 2e6},
			stats.Summary{Count: 3, Min: 1e6, P5: 1e6, P50: 1e6, P90: 2e6, P95: 2e6, P99: 2e6, P999: 2e6, Max: 2e6, Mean: 4e6 / 3.0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := stats.Summarize(tt.in)
			want := tt.want
			// StdDev is checked separately below.
			got.StdDev, want.StdDev = 0, 0
			if math.Abs(got.Mean-want.Mean) < 1e-6 {
				got.Mean = want.Mean
			}
			if got != want {
				t.Errorf("Summarize(%v)\n got %+v\nwant %+v", tt.in, got, want)
			}
		})
	}
}

func TestSummarizeKeepsOrderAndStdDev(t *testing.T) {
	in := []int64{4, 2, 6, 8}
	s := stats.Summarize(in)
	if in[0] != 4 || in[3] != 8 {
		t.Fatalf("Summarize reordered its input: %v", in)
	}
	// Sample standard deviation of 2,4,6,8 is sqrt(20/3).
	if want := math.Sqrt(20.0 / 3); math.Abs(s.StdDev-want) > 1e-9 {
		t.Errorf("StdDev = %v, want %v", s.StdDev, want)
	}
}

func TestLateness(t *testing.T) {
	s := stats.Summary{P50: 1_030_000, P99: 1_080_000}
	got := stats.LatenessOf(s, 1_000_000)
	if got.P50 != 30_000 || got.P99 != 80_000 {
		t.Errorf("LatenessOf = %+v", got)
	}
}

func TestHistogram(t *testing.T) {
	var data []int64
	for i := 0; i < 1000; i++ { // 99 % of the data sits below the outliers
		data = append(data, 1_000_000+int64(i%100)*1000)
	}
	for range 5 {
		data = append(data, 15_000_000) // far outliers, under 1 %
	}
	sortInts(data)
	bins := stats.Histogram(data, 10)
	total := 0
	for i, b := range bins {
		total += b.Count
		if b.Hi <= b.Lo {
			t.Errorf("bin %d empty range %+v", i, b)
		}
	}
	if total != len(data) {
		t.Errorf("histogram holds %d samples, want %d", total, len(data))
	}
	last := bins[len(bins)-1]
	if !last.Overflow || last.Count != 5 {
		t.Errorf("last bin = %+v, want the five outliers in an overflow bin", last)
	}
	if len(bins) != 11 {
		t.Errorf("got %d bins, want 10 and an overflow", len(bins))
	}
	if stats.Histogram(nil, 10) != nil {
		t.Error("Histogram(empty) should be nil")
	}
	same := stats.Histogram([]int64{7, 7, 7}, 10)
	if len(same) != 1 || same[0].Count != 3 {
		t.Errorf("Histogram of equal values = %+v", same)
	}
}

func sortInts(a []int64) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

func BenchmarkSummarize100k(b *testing.B) {
	data := make([]int64, 100_000)
	for i := range data {
		data[i] = 1_000_000 + int64(i*7919%50_000)
	}
	b.ReportAllocs()
	for b.Loop() {
		stats.Summarize(data)
	}
}

// TestP5 is the nearest-rank 5th percentile: of 1..100 ns, 5 ns.
func TestP5(t *testing.T) {
	in := make([]int64, 100)
	for i := range in {
		in[i] = int64(100 - i)
	}
	if got := stats.Summarize(in).P5; got != 5 {
		t.Errorf("P5 of 1..100 = %d, want 5", got)
	}
}
