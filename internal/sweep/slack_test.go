package sweep_test

import (
	"testing"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/sweep"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// point makes a setting's samples: n waits of 1 ms plus late µs.
func slackPoint(slack int64, dma bool, late int64, n int) rawfile.Point {
	s := timerinfo.Setting{SlackNs: slack}
	if dma {
		zero := int32(0)
		s.CPUDMALatencyUs = &zero
	}
	lat := make([]int64, n)
	for i := range lat {
		lat[i] = 1_000_000 + late*1000 + int64(i%3)*1000
	}
	return rawfile.Point{Requested: s, Granted: s, Latencies: lat}
}

func TestJudgeSlack(t *testing.T) {
	points := []rawfile.Point{
		slackPoint(1, false, 30, 100),
		slackPoint(50_000, false, 80, 100),
		slackPoint(500_000, false, 400, 100),
		slackPoint(1, true, 16, 100),
		slackPoint(50_000, true, 60, 100),
	}
	latency := sweep.JudgeSlack(points, 1_000_000, sweep.Preferences{Prefer: "latency", BudgetLateness: 100_000})
	if got := latency.Rows[latency.Recommended].Setting; got.SlackNs != 1 || got.CPUDMALatencyUs == nil {
		t.Errorf("latency pick %v, want slack 1ns with the DMA hold", got)
	}
	power := sweep.JudgeSlack(points, 1_000_000, sweep.Preferences{Prefer: "power", BudgetLateness: 100_000})
	if got := power.Rows[power.Recommended].Setting; got.SlackNs != 50_000 || got.CPUDMALatencyUs != nil {
		t.Errorf("power pick %v, want the 50 µs default without a hold", got)
	}
	tight := sweep.JudgeSlack(points, 1_000_000, sweep.Preferences{Prefer: "power", BudgetLateness: 10_000})
	if !tight.FellBack || tight.Recommended != latency.Recommended {
		t.Errorf("with nothing in budget: fell back %v, pick %d, want the latency pick %d", tight.FellBack, tight.Recommended, latency.Recommended)
	}
	// Interference fails a row whatever its p50.
	noisy := slackPoint(1, false, 5, 100)
	for i := 0; i < 5; i++ {
		noisy.Latencies[i] = 5_000_000
	}
	res := sweep.JudgeSlack([]rawfile.Point{noisy, slackPoint(2, false, 40, 100)}, 1_000_000, sweep.Preferences{Prefer: "latency", BudgetLateness: 100_000})
	if res.Rows[0].Pass || res.Recommended != 1 {
		t.Errorf("a row with 5 %% interference passed or won: %+v", res)
	}
}
