package stats_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
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

func TestPercentileCIAt95(t *testing.T) {
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
		want   stats.Interval
	}{
		{"empty", nil, 50, stats.Interval{}},
		// One sample bounds no median: its range holds it with probability 0.
		{"one sample", []int64{5}, 50, stats.Interval{Estimate: 5, Lo: 5, Hi: 5, Coverage: 0}},
		// B ~ binomial(100, 0.5): P(B < 40) = 0.0176, P(B ≥ 61) = 0.0176:
		// X(40) .. X(61) holds the median with P(40 ≤ B ≤ 60) = 0.9648.
		{"ramp of 100, p50", ramp(100), 50, stats.Interval{Estimate: 50, Lo: 40, Hi: 61, Coverage: 0.9647997997823368}},
		// The largest of 100 is below the true p99 with 0.99^100 = 37 %:
		// only a lower bound, X(97): P(B ≥ 97) = 0.9816.
		{"ramp of 100, p99", ramp(100), 99, stats.Interval{Estimate: 99, Lo: 97, Hi: 100, Coverage: 0.9816259635553497, OneSided: true}},
		// 200 samples, the bench's default: still one-sided (0.99^200 = 13 %).
		{"ramp of 200, p99", ramp(200), 99, stats.Interval{Estimate: 198, Lo: 195, Hi: 200, Coverage: 0.9839770930908238, OneSided: true}},
		// 500: two-sided, P(490 ≤ B ≤ 499).
		{"ramp of 500, p99", ramp(500), 99, stats.Interval{Estimate: 495, Lo: 490, Hi: 500, Coverage: 0.9801859498577733}},
	} {
		got := stats.PercentileCIAt(tt.sorted, tt.p, 0.05)
		if got.Estimate != tt.want.Estimate || got.Lo != tt.want.Lo || got.Hi != tt.want.Hi || got.OneSided != tt.want.OneSided || math.Abs(got.Coverage-tt.want.Coverage) > 1e-9 {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// The coverage PercentileCIAt states is the binomial sum, checked against
// the probabilities summed term by term, and a two-sided interval's is
// never below the level asked (unless it is the samples' whole range).
func TestPercentileCICoverageIsExact(t *testing.T) {
	for _, n := range []int{5, 20, 60} {
		sorted := make([]int64, n)
		for i := range sorted {
			sorted[i] = int64(i + 1)
		}
		for _, p := range []float64{10, 50, 90, 99} {
			q := p / 100
			pmf := func(k int) float64 {
				c := 1.0
				for i := 0; i < k; i++ {
					c = c * float64(n-i) / float64(i+1)
				}
				return c * math.Pow(q, float64(k)) * math.Pow(1-q, float64(n-k))
			}
			iv := stats.PercentileCIAt(sorted, p, 0.05)
			lo, hi := int(iv.Lo), int(iv.Hi)
			want := 0.0
			if iv.OneSided {
				for k := lo; k <= n; k++ { // X(lo) ≤ truth when B ≥ lo
					want += pmf(k)
				}
			} else {
				for k := lo; k < hi; k++ {
					want += pmf(k)
				}
				if iv.Coverage < 0.95 && !(lo == 1 && hi == n) {
					t.Errorf("n=%d p%v: two-sided coverage %v under 95 %%", n, p, iv.Coverage)
				}
			}
			if math.Abs(iv.Coverage-want) > 1e-9 {
				t.Errorf("n=%d p%v: coverage %v, summed %v (%+v)", n, p, iv.Coverage, want, iv)
			}
		}
	}
}

func TestMedianDiffCI(t *testing.T) {
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
	got := stats.MedianDiffCI(ramp(100, 30), ramp(100, 0))
	if got.Estimate != 30 || math.Abs(got.Lo-(30-half)) > 1e-9 || math.Abs(got.Hi-(30+half)) > 1e-9 {
		t.Errorf("difference of ramps 30 apart: %+v, want 30 ± %.3f", got, half)
	}
	// Identical samples of one value: no noise, a difference of 0.
	same := []int64{7, 7, 7, 7}
	if got := stats.MedianDiffCI(same, same); got != (stats.Interval{Coverage: 0.95}) {
		t.Errorf("identical samples: %+v", got)
	}
	if got := stats.MedianDiffCI(nil, same); got != (stats.Interval{}) {
		t.Errorf("no samples: %+v", got)
	}
}

// A difference of p99s is bounded only where both p99s are, and then by
// their intervals' ends, with the coverage Bonferroni gives them.
func TestPercentileDiffBounds(t *testing.T) {
	ramp := func(n int, offset int64) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(i+1) + offset
		}
		return out
	}
	a, b := ramp(500, 1000), ramp(500, 0)
	ia, ib := stats.PercentileCIAt(a, 99, 0.025), stats.PercentileCIAt(b, 99, 0.025)
	got := stats.PercentileDiffBounds(a, b, 99, 0.05)
	if got.Unbounded || got.Estimate != 1000 || got.Lo != ia.Lo-ib.Hi || got.Hi != ia.Hi-ib.Lo || math.Abs(got.Coverage-(ia.Coverage+ib.Coverage-1)) > 1e-12 || got.Coverage < 0.95 {
		t.Errorf("500 samples each: %+v (from %+v and %+v)", got, ia, ib)
	}
	// 200 samples bound no p99 above: nor the difference, either way.
	if got := stats.PercentileDiffBounds(ramp(200, 1000), ramp(200, 0), 99, 0.05); !got.Unbounded || got.Coverage != 0 || got.Estimate != 1000 || got.Lo != 1001-200 || got.Hi != 1200-1 {
		t.Errorf("200 samples each: %+v, want unbounded", got)
	}
	// Medians of 200 are bounded.
	if got := stats.PercentileDiffBounds(ramp(200, 1000), ramp(200, 0), 50, 0.05); got.Unbounded || got.Lo >= 1000 || got.Hi <= 1000 {
		t.Errorf("medians of 200: %+v", got)
	}
}

// Waits quantised on the scale of the median's own noise (100 ns steps,
// here 4 values) leave Price and Bonett's standard error no guide: the
// difference is bounded from the two medians' own intervals instead.
func TestMedianDiffCIQuantised(t *testing.T) {
	steps := func(n int, offset int64) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = offset + int64(4*i/n)*100
		}
		return out
	}
	a, b := steps(500, 1_000_100), steps(500, 1_000_000)
	got, want := stats.MedianDiffCI(a, b), stats.PercentileDiffBounds(a, b, 50, 0.05)
	if got != want || got.Unbounded || got.Lo > 100 || got.Hi < 100 || got.Coverage < 0.95 {
		t.Errorf("quantised: %+v, want the bounds %+v", got, want)
	}
	if got := stats.MedianDiffCIAt(a, b, 0.01); got != stats.PercentileDiffBounds(a, b, 50, 0.01) {
		t.Errorf("quantised at 99 %%: %+v", got)
	}
}

func BenchmarkMedianDiffCI(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func(step int64) []int64 {
		out := make([]int64, 500)
		for i := range out {
			out[i] = (1_020_000 + int64(6000*math.Exp(0.6*rng.NormFloat64())) + step - 1) / step * step
		}
		slices.Sort(out)
		return out
	}
	for _, step := range []int64{1, 100} {
		x, y := draw(step), draw(step)
		b.Run(fmt.Sprintf("step=%dns", step), func(b *testing.B) {
			for b.Loop() {
				stats.MedianDiffCI(x, y)
			}
		})
	}
}
