package sweep_test

import (
	"flag"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/stats"
	"github.com/tickscope/tickscope/internal/sweep"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// coverageReplicates is how many simulated benches each scenario of
// TestIntervalCoverage judges; BENCHMARKS.md's table is
// go test ./internal/sweep -run TestIntervalCoverage -v -coverage-replicates 10000
var coverageReplicates = flag.Int("coverage-replicates", 1000, "simulated benches per scenario in TestIntervalCoverage")

// lognormalLateness is a setting's lateness past the 1 ms delay: base plus
// scale times a log-normal variable of shape sigma (µs), right-skewed as a
// clean machine's is. Its quantiles are known exactly.
type lognormalLateness struct{ base, scale, sigma float64 }

func (d lognormalLateness) draw(rng *rand.Rand) int64 {
	return 1_000_000 + int64(math.Round(1000*(d.base+d.scale*math.Exp(d.sigma*rng.NormFloat64()))))
}

// quantile is the true p-th percentile of the latency, ns.
func (d lognormalLateness) quantile(p float64) float64 {
	z := math.Sqrt2 * math.Erfinv(2*p/100-1)
	return 1_000_000 + 1000*(d.base+d.scale*math.Exp(d.sigma*z))
}

// latencyDist is a setting's distribution of waits, with its true
// percentiles.
type latencyDist interface {
	draw(rng *rand.Rand) int64
	// quantile is the true p-th percentile of the latency, ns.
	quantile(p float64) float64
}

// timerLateness is a timer that wakes the 1 ms delay a jitter of
// 2 µs + e^(0.5 Z) µs late, and a whole 1 ms tick later in a share tail
// of the waits, each wait rounded up to a multiple of step ns (Windows'
// performance counter counts 100 ns): the tail is lumpy, and the waits
// near the median tie.
type timerLateness struct {
	tail float64
	step int64
}

func (d timerLateness) jitter(z float64) int64 {
	return int64(math.Round(1000 * (2 + math.Exp(0.5*z))))
}

func (d timerLateness) round(ns int64) int64 { return (ns + d.step - 1) / d.step * d.step }

func (d timerLateness) draw(rng *rand.Rand) int64 {
	ns := 1_000_000 + d.jitter(rng.NormFloat64())
	if rng.Float64() < d.tail {
		ns += 1_000_000
	}
	return d.round(ns)
}

// quantile inverts the mixture's distribution (continuous before the
// rounding, which the percentile then goes through as any monotone map).
func (d timerLateness) quantile(p float64) float64 {
	q := p / 100
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	cdfJ := func(z float64) float64 { return phi(z) } // P(jitter ≤ jitter(z))
	// In Z units of the jitter: the bulk holds (1−tail)Φ(z), the tail
	// starts after the whole bulk.
	if q <= 1-d.tail {
		lo, hi := -12.0, 12.0
		for range 200 {
			mid := (lo + hi) / 2
			if (1-d.tail)*cdfJ(mid) < q {
				lo = mid
			} else {
				hi = mid
			}
		}
		return float64(d.round(1_000_000 + d.jitter(hi)))
	}
	lo, hi := -12.0, 12.0
	for range 200 {
		mid := (lo + hi) / 2
		if 1-d.tail+d.tail*cdfJ(mid) < q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return float64(d.round(2_000_000 + d.jitter(hi)))
}

// coverageScenario is a bench (Linux slacks, or Windows periods) whose
// settings' distributions are known: the pick's figures and its margins over the runner-up can be
// checked against the truth.
type coverageScenario struct {
	name     string
	settings []latencyDist
	samples  int
	// windows judges the settings as the Windows bench's rows (periods
	// 0.5100 ms up, one a setting) instead of Linux slacks.
	windows bool
}

func coverageScenarios() []coverageScenario {
	clean := lognormalLateness{base: 20, scale: 6, sigma: 0.6}
	worse := func(i int) lognormalLateness {
		d := clean
		d.base += 10 + 4*float64(i)
		return d
	}
	clear := []latencyDist{clean}
	ties := []latencyDist{clean}
	for i := 1; i < 10; i++ {
		clear, ties = append(clear, worse(i)), append(ties, clean)
	}
	// A timer a 1 ms tick late in 1 % of the waits, counted in 100 ns.
	timer := timerLateness{tail: 0.01, step: 100}
	timers := []latencyDist{timer, timer}
	// The Windows bench: two bands of three periods, 1.008 ms and 1.2 ms.
	fast, slow := lognormalLateness{base: 4, scale: 6, sigma: 0.6}, lognormalLateness{base: 196, scale: 6, sigma: 0.6}
	early := lognormalLateness{base: -30, scale: 6, sigma: 0.6}
	return []coverageScenario{
		{name: "Linux, one clearly best of 10", settings: clear, samples: 200},
		{name: "Linux, 10 equivalent", settings: ties, samples: 200},
		{name: "Linux, 2 equivalent", settings: ties[:2], samples: 200},
		{name: "Linux, 10 equivalent", settings: ties, samples: 500},
		{name: "Linux, one clearly best of 2", settings: clear[:2], samples: 500},
		{name: "Linux, 2 equivalent", settings: ties[:2], samples: 500},
		{name: "Windows, one band clearly best of 2", settings: []latencyDist{fast, fast, fast, slow, slow, slow}, samples: 200, windows: true},
		{name: "timer 1 % a tick late, 100 ns steps, 2 equivalent", settings: timers, samples: 200},
		{name: "timer 1 % a tick late, 100 ns steps, 2 equivalent", settings: timers, samples: 500},
		{name: "timer 1 % a tick late, 100 ns steps, 2 equivalent", settings: timers, samples: 1000},
		// Two bands of the same waits, kept apart by a period that wakes
		// early (0.976 ms, failing the p50 gate).
		{name: "Windows, 2 equivalent bands", settings: []latencyDist{fast, fast, fast, early, fast, fast, fast}, samples: 200, windows: true},
	}
}

// intervalCount is how often one printed interval held the truth, of the
// benches where it claimed to (unbounded counts those it did not).
type intervalCount struct{ held, judged, unbounded int }

func (c *intervalCount) add(iv stats.Interval, truth float64) {
	if unbounded(iv) {
		c.unbounded++
		return
	}
	c.judged++
	if truth >= iv.Lo && (oneSided(iv) || truth <= iv.Hi) {
		c.held++
	}
}

func (c intervalCount) share() float64 { return float64(c.held) / float64(max(c.judged, 1)) }

// oneSided reports whether an interval bounds its figure from below only.
func oneSided(iv stats.Interval) bool { return iv.OneSided }

// unbounded reports whether an interval claims nothing.
func unbounded(iv stats.Interval) bool { return iv.Unbounded }

// coverageIntervals are the figures TestIntervalCoverage counts, in the
// order of its table: the recommendation's intervals; each equivalence
// mark's p50 minus the lowest candidate's ("p50 vs best", every printed
// one, and "p50 vs best, all at once", the benches where every one of
// them held); and "no false dominance", the benches where no candidate
// was marked dominated by one whose true p50 is not lower. A mark is
// printed beside the other candidates, so a bench may print none.
var coverageIntervals = []struct {
	name string
	mark bool
}{
	{"p50", false}, {"p99", false}, {"margin p50", false}, {"margin p99", false},
	{"p50 vs best", true}, {"p50 vs best, all at once", true}, {"no false dominance", true},
}

// candidateMarks is how the latency pick marked one candidate (a Linux
// setting, a Windows band's middle row): the true p50 of its setting, its
// printed difference from the lowest (nil for the lowest and the
// dominated), and the true p50 of the one that dominates it.
type candidateMarks struct {
	truth       float64
	vsBest      *stats.Interval
	dominated   bool
	dominator   float64
	isCandidate bool
}

// countMarks adds one bench's equivalence and dominance marks to out.
func countMarks(out map[string]*intervalCount, marks []candidateMarks) {
	best := -1
	for i, m := range marks {
		if m.isCandidate && !m.dominated && m.vsBest == nil {
			best = i
		}
	}
	if best < 0 {
		return
	}
	all := intervalCount{}
	falseDominance := false
	for _, m := range marks {
		if m.dominated && m.dominator >= m.truth {
			falseDominance = true
		}
		if m.vsBest != nil {
			out["p50 vs best"].add(*m.vsBest, m.truth-marks[best].truth)
			all.add(*m.vsBest, m.truth-marks[best].truth)
		}
	}
	if all.judged > 0 {
		out["p50 vs best, all at once"].judged++
		if all.held == all.judged {
			out["p50 vs best, all at once"].held++
		}
	}
	out["no false dominance"].judged++
	if !falseDominance {
		out["no false dominance"].held++
	}
}

// coverageOf judges replicates simulated benches of s and counts how
// often each interval the recommendation prints held the truth.
func coverageOf(s coverageScenario, replicates int, seed uint64) map[string]*intervalCount {
	rng := rand.New(rand.NewPCG(seed, 0x636f766572))
	out := map[string]*intervalCount{}
	for _, iv := range coverageIntervals {
		out[iv.name] = &intervalCount{}
	}
	points := make([]rawfile.Point, len(s.settings))
	const period = 156250 // the coarsest period, in force throughout
	for r := 0; r < replicates; r++ {
		for i, d := range s.settings {
			setting := timerinfo.Setting{SlackNs: int64(i + 1)}
			if s.windows {
				setting = timerinfo.Setting{Resolution100ns: uint32(5100 + i)}
			}
			lat := make([]int64, s.samples)
			for j := range lat {
				lat[j] = d.draw(rng)
			}
			points[i] = rawfile.Point{Requested: setting, Granted: setting, Latencies: lat,
				Conditions: timerinfo.Conditions{CurrentBefore100ns: period, CurrentAfter100ns: period}}
		}
		var c *sweep.Confidence
		recommended := -1
		var marks []candidateMarks
		if s.windows {
			res := sweep.Judge(points, sweep.DefaultPreferences(), s.samples, period)
			c, recommended = res.Confidence, res.Recommended
			// Rows are the points in order (no period is held elsewhere).
			truth := func(b sweep.Band) float64 { return s.settings[b.Rows[(len(b.Rows)-1)/2]].quantile(50) }
			for _, b := range res.Bands {
				m := candidateMarks{truth: truth(b), vsBest: b.P50VsBest, isCandidate: b.Pass && len(b.Rows) >= 2}
				if b.DominatedBy != nil {
					m.dominated, m.dominator = true, truth(res.Bands[*b.DominatedBy])
				}
				marks = append(marks, m)
			}
		} else {
			res := sweep.JudgeSlack(points, 1_000_000, sweep.DefaultPreferences())
			c, recommended = res.Confidence, res.Recommended
			for i, row := range res.Rows {
				m := candidateMarks{truth: s.settings[i].quantile(50), vsBest: row.P50VsBest, isCandidate: row.Pass}
				if row.DominatedBy != nil {
					m.dominated, m.dominator = true, s.settings[*row.DominatedBy].quantile(50)
				}
				marks = append(marks, m)
			}
		}
		countMarks(out, marks)
		if c == nil {
			continue
		}
		pick := s.settings[recommended]
		out["p50"].add(c.P50, pick.quantile(50))
		out["p99"].add(c.P99, pick.quantile(99))
		if c.RunnerUp >= 0 && c.MarginP50 != nil && c.MarginP99 != nil {
			other := s.settings[c.RunnerUp]
			out["margin p50"].add(*c.MarginP50, other.quantile(50)-pick.quantile(50))
			out["margin p99"].add(*c.MarginP99, other.quantile(99)-pick.quantile(99))
		}
	}
	return out
}

// Every interval the bench's recommendation prints as 95 % holds the
// truth at least 95 % of the time, within the noise of the replicate count
// (three binomial standard errors), when drawn from known distributions:
// one setting clearly best, and the pick chosen among equivalent settings
// by its lowest observed p99, where the winner's curse biases its own p99
// low. So do the marks beside the other candidates, all of a bench's at
// once: the equivalence marks' differences from the lowest p50, chosen
// by the same samples, and the dominance marks' "lower p50 beyond the
// noise". Simulated: it checks the intervals' construction, not a
// machine.
func TestIntervalCoverage(t *testing.T) {
	reps := *coverageReplicates
	if testing.Short() {
		reps = min(reps, 300)
	}
	const level = 0.95
	tolerance := 3 * math.Sqrt(level*(1-level)/float64(reps))
	t.Logf("| scenario | samples | interval | coverage | benches |")
	t.Logf("| --- | --- | --- | --- | --- |")
	for i, s := range coverageScenarios() {
		counts := coverageOf(s, reps, uint64(i+1))
		if counts["p50"].judged == 0 {
			t.Errorf("%s: nothing recommended", s.name)
		}
		for _, iv := range coverageIntervals {
			name, mark := iv.name, iv.mark
			c := counts[name]
			if c.judged == 0 && c.unbounded > 0 {
				t.Logf("| %s | %d | %s | no interval (%s) | %d |", s.name, s.samples, name, "too few samples", c.unbounded)
				continue
			}
			if mark && c.judged == 0 {
				// No candidate but the lowest is undominated.
				t.Logf("| %s | %d | %s | not printed | 0 |", s.name, s.samples, name)
				continue
			}
			t.Logf("| %s | %d | %s | %.1f %% | %d |", s.name, s.samples, name, 100*c.share(), c.judged)
			if !mark && c.judged+c.unbounded < reps/2 {
				t.Errorf("%s: %s printed in %d of %d benches", s.name, name, c.judged+c.unbounded, reps)
				continue
			}
			// A bench's marks are not independent of one another: their
			// noise is that of the benches, however many they print.
			tol := 3 * math.Sqrt(level*(1-level)/float64(min(c.judged, reps)))
			if c.share() < level-max(tolerance, tol) {
				t.Errorf("%s: %s held in %.1f %% of %d, want at least %.1f %% (95 %% less three standard errors)",
					s.name, name, 100*c.share(), c.judged, 100*(level-max(tolerance, tol)))
			}
		}
	}
}
