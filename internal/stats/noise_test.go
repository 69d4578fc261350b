package stats_test

import (
	"math"
	"testing"

	"github.com/tickscope/tickscope/internal/stats"
)

func TestPercentileSE(t *testing.T) {
	ramp := func(n int) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(i + 1)
		}
		return out
	}
	for _, tt := range []struct {
		name   string
		sorted []int64
		p      float64
		want   float64
	}{
		{"one sample", []int64{5}, 50, 0},
		{"all equal", []int64{7, 7, 7, 7, 7, 7, 7, 7}, 50, 0},
		// n=100, p50: ranks 50 ± 1.96 × 5 = 40.2..59.8, widened to whole
		// ranks 40..60: (60-40)/(2 × 1.96).
		{"ramp of 100, p50", ramp(100), 50, 20 / (2 * 1.959964)},
		// n=200, p99: ranks 198 ± 1.96 × 1.41 -> 195..201, capped at 200.
		{"ramp of 200, p99", ramp(200), 99, 5 / (2 * 1.959964)},
	} {
		if got := stats.PercentileSE(tt.sorted, tt.p); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestDiffersBeyond(t *testing.T) {
	for _, tt := range []struct {
		a, b, seA, seB, floor float64
		want                  bool
	}{
		{100, 105, 0, 0, 10, false}, // under the floor
		{100, 111, 0, 0, 10, true},
		{100, 111, 4, 3, 10, true},  // 2 × 5 = 10 < 11
		{100, 111, 6, 8, 10, false}, // 2 × 10 = 20 > 11
		{111, 100, 0, 0, 10, true},  // either order
	} {
		if got := stats.DiffersBeyond(tt.a, tt.b, tt.seA, tt.seB, tt.floor); got != tt.want {
			t.Errorf("DiffersBeyond(%v, %v, %v, %v, %v) = %v", tt.a, tt.b, tt.seA, tt.seB, tt.floor, got)
		}
	}
}

func TestShareAbove(t *testing.T) {
	// At 200 samples two standard errors of a 2 % share are 1.98 %.
	for _, tt := range []struct {
		share float64
		n     int
		want  bool
	}{
		{0.02, 200, false},
		{0.039, 200, false},
		{0.04, 200, true},
		{0.04, 2000, true}, // 0.626 % at 2000
		{0.025, 2000, false},
		{0.5, 0, false},
	} {
		if got := stats.ShareAbove(tt.share, 0.02, tt.n); got != tt.want {
			t.Errorf("ShareAbove(%v, 2 %%, %d) = %v", tt.share, tt.n, got)
		}
	}
}

func TestPercentileCI(t *testing.T) {
	ramp := make([]int64, 100)
	for i := range ramp {
		ramp[i] = int64(i + 1)
	}
	for _, tt := range []struct {
		name   string
		sorted []int64
		p      float64
		want   stats.Interval
	}{
		{"empty", nil, 50, stats.Interval{}},
		{"one sample", []int64{5}, 50, stats.Interval{Estimate: 5, Lo: 5, Hi: 5}},
		// Ranks 50 ± 1.96 × 5 = 40.2..59.8, widened to 40..60.
		{"ramp of 100, p50", ramp, 50, stats.Interval{Estimate: 50, Lo: 40, Hi: 60}},
		// Ranks 99 ± 1.96 × 0.995 = 97.05..100.95: 97..100, the largest.
		{"ramp of 100, p99", ramp, 99, stats.Interval{Estimate: 99, Lo: 97, Hi: 100}},
	} {
		if got := stats.PercentileCI(tt.sorted, tt.p); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestPercentileDiffCI(t *testing.T) {
	ramp := func(n int, offset int64) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(i+1) + offset
		}
		return out
	}
	// Each ramp of 100 has a p50 standard error of 20/3.92; the two
	// combine to √2 of it, and the interval is 1.96 of that either side.
	half := 1.959964 * math.Sqrt2 * 20 / (2 * 1.959964)
	got := stats.PercentileDiffCI(ramp(100, 30), ramp(100, 0), 50)
	if got.Estimate != 30 || math.Abs(got.Lo-(30-half)) > 1e-9 || math.Abs(got.Hi-(30+half)) > 1e-9 {
		t.Errorf("difference of ramps 30 apart: %+v, want 30 ± %.3f", got, half)
	}
	// Identical samples of one value: no noise, a difference of 0.
	same := []int64{7, 7, 7, 7}
	if got := stats.PercentileDiffCI(same, same, 50); got != (stats.Interval{}) {
		t.Errorf("identical samples: %+v", got)
	}
	if got := stats.PercentileDiffCI(nil, same, 50); got != (stats.Interval{}) {
		t.Errorf("no samples: %+v", got)
	}
}
