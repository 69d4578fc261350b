package waitcheck

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

func model(t *testing.T, scenario string) *sim.Host {
	t.Helper()
	h, err := sim.NewHost(scenario, 1)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func query(t *testing.T, h *sim.Host) *timerinfo.Report {
	t.Helper()
	q, err := h.Query()
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func TestSamplesFollowTheCoarsestPeriod(t *testing.T) {
	dma := int32(0)
	tests := []struct {
		q    *timerinfo.Report
		want int
	}{
		{&timerinfo.Report{Windows: &timerinfo.Windows{Coarsest100ns: 156250}}, 50},
		{&timerinfo.Report{Windows: &timerinfo.Windows{Coarsest100ns: 10000}}, 200},
		{&timerinfo.Report{Windows: &timerinfo.Windows{Coarsest100ns: 1_000_000}}, 20},
		{&timerinfo.Report{OS: "linux", Linux: &timerinfo.Linux{CPUDMALatencyUs: &dma}}, 200},
	}
	for _, tt := range tests {
		if got := samples(tt.q); got != tt.want {
			t.Errorf("samples(%+v) = %d, want %d", tt.q.Windows, got, tt.want)
		}
	}
}

func TestMeasureStoppedBeforeMeasuring(t *testing.T) {
	h := model(t, "knee-26100")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Measure(ctx, h, query(t, h), timerinfo.Setting{})
	if !errors.Is(err, sample.ErrNothingMeasured) {
		t.Errorf("Measure with ctx done: %v, want ErrNothingMeasured", err)
	}
}

// SIMULATED: a wait check across a 3 s suspend of the machine (the
// suspended scenario's, 1 s into the run; the check's 50 waits at the
// 15.625 ms default begin 0.9 s in) leaves out the wait across it: the
// check's p99 is the timer's, not the suspend's.
func TestMeasureLeavesOutASuspend(t *testing.T) {
	h := model(t, "suspended")
	h.Advance(900 * time.Millisecond)
	c, err := Measure(context.Background(), h, query(t, h), timerinfo.Setting{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Samples != 49 || c.P99Ns > int64(16*time.Millisecond) {
		t.Errorf("check %+v, want 49 of the 50 waits, p99 within a 15.625 ms tick", c)
	}
}
