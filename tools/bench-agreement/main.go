// Command bench-agreement runs the bench's adaptive design and its
// exhaustive design (TickTune's: the full sample count at every candidate)
// on the model of Windows timers, for many seeds of every scenario, and
// prints how often they recommend the same band and how much simulated
// sleeping the adaptive design costs relative to the exhaustive one. The
// target: agreement in every scenario, for both preferences, for at most
// 15 % of the exhaustive design's time. Everything it prints is SIMULATED.
//
//	go run ./tools/bench-agreement [-seeds 100] [-first 1] [-samples 200] [-prefer latency] [-scenario NAME]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/sweep"
)

func main() {
	seeds := flag.Int("seeds", 100, "seeds per scenario")
	first := flag.Int("first", 1, "the first seed")
	samples := flag.Int("samples", 200, "--samples of the bench")
	prefer := flag.String("prefer", "latency", "latency or power")
	only := flag.String("scenario", "", "run only this scenario")
	flag.Parse()
	prefs := sweep.DefaultPreferences()
	prefs.Prefer = *prefer

	fmt.Printf(report.SimulatedLabel+"%-16s %6s %10s %12s %12s %10s\n", "scenario", "runs", "agreement", "adaptive s", "exhaustive s", "time ratio")
	allAgree, allRuns := 0, 0
	var allAdaptive, allExhaustive int64
	worstRatio := 0.0
	for _, sc := range sim.Scenarios() {
		if *only != "" && sc.Name != *only {
			continue
		}
		agree := 0
		var adaptive, exhaustive int64
		for seed := *first; seed < *first+*seeds; seed++ {
			a, aSlept, err := run(sc.Name, uint64(seed), false, *samples, prefs)
			check(err)
			e, eSlept, err := run(sc.Name, uint64(seed), true, *samples, prefs)
			check(err)
			if Agree(a, e) {
				agree++
			}
			adaptive += aSlept
			exhaustive += eSlept
		}
		ratio := float64(adaptive) / float64(exhaustive)
		worstRatio = max(worstRatio, ratio)
		fmt.Printf(report.SimulatedLabel+"%-16s %6d %9.1f%% %12.1f %12.1f %9.1f%%\n", sc.Name, *seeds, 100*float64(agree)/float64(*seeds),
			float64(adaptive)/1e9, float64(exhaustive)/1e9, 100*ratio)
		allAgree += agree
		allRuns += *seeds
		allAdaptive += adaptive
		allExhaustive += exhaustive
	}
	fmt.Printf(report.SimulatedLabel+"%-16s %6d %9.1f%% %12.1f %12.1f %9.1f%%  (worst scenario %.1f%%)\n", "all", allRuns,
		100*float64(allAgree)/float64(allRuns), float64(allAdaptive)/1e9, float64(allExhaustive)/1e9,
		100*float64(allAdaptive)/float64(allExhaustive), 100*worstRatio)
}

// run benches one scenario and seed, returning the judgement and the
// simulated time spent sleeping.
func run(scenario string, seed uint64, exhaustive bool, samples int, prefs sweep.Preferences) (*sweep.Result, int64, error) {
	h, err := sim.NewHost(scenario, seed)
	if err != nil {
		return nil, 0, err
	}
	sc := h.Scenario()
	// The bench's query, before the sweep: the period the sweep starts
	// with, which the judgement holds every point to.
	q, err := h.Query()
	if err != nil {
		return nil, 0, err
	}
	r := &sweep.Runner{Host: h, Plan: sweep.Plan{Samples: samples, Exhaustive: exhaustive, Seed: seed, Prefs: prefs}}
	points, err := r.Run(context.Background(), sweep.Grid(sc.Finest, sc.Coarsest, sc.Finest, sc.Coarsest))
	if err != nil {
		return nil, 0, err
	}
	return sweep.Judge(points, prefs, samples, q.Windows.Current100ns), h.SleptNs(), nil
}

// Agree reports whether the adaptive recommendation falls in the exhaustive
// design's recommended band (or neither recommends anything).
func Agree(adaptive, exhaustive *sweep.Result) bool {
	if adaptive.Recommended < 0 || exhaustive.Recommended < 0 {
		return adaptive.Recommended < 0 && exhaustive.Recommended < 0
	}
	g := adaptive.Rows[adaptive.Recommended].Granted
	b := exhaustive.Bands[exhaustive.Band]
	return g >= b.LoGranted && g <= b.HiGranted
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-agreement:", err)
		os.Exit(1)
	}
}
