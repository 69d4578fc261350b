package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/machine"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// queryHost answers Query and nothing else.
type queryHost struct {
	seam.Host
	q   *timerinfo.Report
	err error
}

func (h queryHost) Query() (*timerinfo.Report, error) { return h.q, h.err }

// The loops' setting follows the host's query, not the OS the tool was
// built for: the model of Windows timers runs on Linux too.
func TestSetting(t *testing.T) {
	failed := errors.New("query failed")
	for _, tt := range []struct {
		name string
		h    queryHost
		want timerinfo.Setting
		err  error
	}{
		{"linux: slack 1 ns", queryHost{q: &timerinfo.Report{OS: "linux", Linux: &timerinfo.Linux{}}}, timerinfo.Setting{SlackNs: 1}, nil},
		{"windows: nothing", queryHost{q: &timerinfo.Report{OS: "windows", Windows: &timerinfo.Windows{}}}, timerinfo.Setting{}, nil},
		{"elsewhere: nothing", queryHost{q: &timerinfo.Report{OS: "darwin"}}, timerinfo.Setting{}, nil},
		{"a failed query", queryHost{err: failed}, timerinfo.Setting{}, failed},
	} {
		got, err := loopSetting(tt.h)
		if !errors.Is(err, tt.err) || got != tt.want {
			t.Errorf("%s: %+v, %v; want %+v, %v", tt.name, got, err, tt.want, tt.err)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tt := range []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{9, 1, 5}, 5},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		in := append([]float64(nil), tt.xs...)
		if got := median(tt.xs); got != tt.want {
			t.Errorf("Median(%v) = %v, want %v", tt.xs, got, tt.want)
		}
		for i := range in {
			if in[i] != tt.xs[i] {
				t.Errorf("Median changed its input to %v", tt.xs)
			}
		}
	}
}

// The tickers, timed against the tick each Wait delivered, are never
// early on the real clock, whatever the schedule (a short run: it asserts
// nothing about lateness, which the machine's load decides).
func TestTickersAreNeverEarly(t *testing.T) {
	host := machine.Host()
	for _, name := range []string{"precise-ticker", "hybrid-ticker", "precise-skiplate"} {
		if !loopAvailable(host, name) {
			continue
		}
		r, err := runLoop(context.Background(), host, name, 2*time.Millisecond, 30)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(r.Lateness) != 30 || r.Early != 0 {
			t.Errorf("%s: %d ticks, %d early (first %v ns)", name, len(r.Lateness), r.Early, r.Lateness[0])
		}
	}
}
