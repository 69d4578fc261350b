package stats_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tickscope/tickscope/internal/stats"
)

func TestFitTickFindsTheWindowsDefaultTick(t *testing.T) {
	// Sleep(1..100 ms) on a 15.625 ms tick, with a few µs of noise: seed
	// 004's sawtooth.
	rng := rand.New(rand.NewPCG(1, 2))
	var delays, over []float64
	tick := 15_625_000.0
	for ms := 1; ms <= 100; ms++ {
		d := float64(ms) * 1e6
		delays = append(delays, d)
		over = append(over, tick*math.Ceil((d+5000)/tick)-d+rng.NormFloat64()*20_000)
	}
	fit := stats.FitTick(delays, over, 1_000_000, 50_000_000)
	if fit.TickNs < 15_600_000 || fit.TickNs > 15_650_000 {
		t.Errorf("tick %d ns (explained %.3f), want ~15.625 ms", fit.TickNs, fit.Explained)
	}
}

func TestFitTickSeesNoTickInAConstantOvershoot(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var delays, over []float64
	for ms := 1; ms <= 100; ms++ {
		delays = append(delays, float64(ms)*1e6)
		over = append(over, 70_000+rng.NormFloat64()*10_000)
	}
	if fit := stats.FitTick(delays, over, 1_000_000, 50_000_000); fit.TickNs != 0 {
		t.Errorf("found a %d ns tick in a constant overshoot (explained %.3f)", fit.TickNs, fit.Explained)
	}
}
