// The loops: a periodic loop kept with each way a Go program can keep a
// period, measuring every tick's lateness and the CPU it costs, for what
// loop-bench prints and BenchmarkLoop reports.
//
// Loops that end at absolute deadlines of the loop's own (Go's time.Sleep
// to each deadline, the native absolute sleep, spin_sleep's fixed-margin
// hybrid, the pure spin) are periodic wait methods of the OS seam, timed
// by the one measurement loop (sample.Series), which skips a deadline
// already past when a wait begins. The tickers keep schedules of their
// own, which a stall can put out of step with the loop's deadlines, so
// each is timed against its own: precise.Ticker against the tick its Wait
// delivered (one period before the tick it says is due after the Wait),
// time.Ticker (which drops ticks it cannot deliver) against the last tick
// due. precise.Ticker by default delivers a tick less than a period late
// at once, late (as tokio's and spin_sleep_util's intervals do), where
// the measurement loop would skip it: after a stall longer than a period
// the ticker has one late tick more than the seam's hybrid.
// precise-skiplate is the ticker with SkipLate, the measurement loop's
// schedule. So that the margin policy can be compared with spin_sleep's
// fixed margin on equal terms, hybrid-ticker is precise.Ticker with that
// fixed margin (WithMargin), timed as precise-ticker is.

package main

import (
	"context"
	"runtime"
	"slices"
	"time"

	"github.com/tickscope/tickscope/internal/nativewait"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/precise"
)

// loopNames are the ways compared, in the order printed: what Go offers, the
// native timer alone, spin_sleep's hybrid, precise, and the pure spin
// that is every loop's floor.
var loopNames = []string{"go-until", "go-ticker", "clock-abs", "hybrid", "hybrid-ticker", "precise-ticker", "precise-skiplate", "spin"}

// loopResult is one loop's run.
type loopResult struct {
	// Lateness of each tick in ns, sorted; negative is early.
	Lateness []int64
	Early    int
	// CPU is the process's CPU time over wall time while the loop ran.
	CPU     float64
	Stopped bool
}

// loopAvailable reports whether the host has the loop.
func loopAvailable(h seam.Host, name string) bool {
	switch name {
	case "go-ticker", "precise-ticker", "precise-skiplate":
		return true
	case "hybrid-ticker":
		// Where the seam has spin_sleep's hybrid, whose margin it takes.
		name = "hybrid"
	}
	_, err := seam.FindMethod(h, name)
	return err == nil
}

// loopSetting is the finest setting the host gives without privileges, which
// every loop runs under: on Linux timer slack 1 ns on the measuring
// thread; nothing elsewhere.
func loopSetting(h seam.Host) (timerinfo.Setting, error) {
	q, err := h.Query()
	if err != nil {
		return timerinfo.Setting{}, err
	}
	if q.Linux != nil {
		return timerinfo.Setting{SlackNs: 1}, nil
	}
	return timerinfo.Setting{}, nil
}

// runLoop keeps the loop for ticks ticks of period, after a warm-up, under
// loopSetting(h).
func runLoop(ctx context.Context, h seam.Host, name string, period time.Duration, ticks int) (*loopResult, error) {
	setting, err := loopSetting(h)
	if err != nil {
		return nil, err
	}
	warmup := sample.DefaultWarmup(ticks)
	switch name {
	case "go-ticker":
		return ownSchedule(ctx, h, setting, ticks, warmup, func() (func() int64, func()) {
			start := h.Now()
			t := time.NewTicker(period)
			return func() int64 {
				<-t.C
				return (h.Now() - start) % int64(period)
			}, t.Stop
		})
	case "precise-ticker", "hybrid-ticker", "precise-skiplate":
		var opts []precise.Option
		switch name {
		case "hybrid-ticker":
			// The seam's hybrid margin: spin_sleep's on Linux and Windows.
			opts = append(opts, precise.WithMargin(nativewait.InitialMargin))
		case "precise-skiplate":
			opts = append(opts, precise.WithMissed(precise.SkipLate))
		}
		return ownSchedule(ctx, h, setting, ticks, warmup, func() (func() int64, func()) {
			t := precise.NewTicker(period, opts...)
			return func() int64 {
				t.Wait()
				end := h.Now()
				// Due reads the clock after end, so the tick delivered is
				// placed no later than it was: the lateness is never
				// understated, and overstated by the tens of ns between
				// the two reads.
				delivered := end + int64(t.Due()) - int64(period)
				return end - delivered
			}, t.Stop
		})
	}
	points, err := sample.Series(ctx, h, []sample.Spec{{Method: name, Delay: period, Samples: ticks, Warmup: warmup, Setting: setting}}, nil)
	if err != nil {
		return nil, err
	}
	point := points[0]
	// A periodic sample is the period plus the lateness past its deadline.
	late := make([]int64, len(point.Latencies))
	for i, l := range point.Latencies {
		late[i] = l - int64(period)
	}
	return finish(late, float64(point.Conditions.CPUNs)/float64(point.Conditions.WallNs), point.Stopped), nil
}

// recordLoop keeps the native loop name (a periodic wait method of the OS
// seam, e.g. clock-abs or timerfd) for ticks ticks of period under
// loopSetting(h) and returns each tick's lateness in ns in the order measured:
// the trace of the native timer's wake-ups that precise's margin policies
// are replayed against.
func recordLoop(ctx context.Context, h seam.Host, name string, period time.Duration, ticks int) ([]int64, error) {
	setting, err := loopSetting(h)
	if err != nil {
		return nil, err
	}
	points, err := sample.Series(ctx, h, []sample.Spec{{Method: name, Delay: period, Samples: ticks, Warmup: sample.DefaultWarmup(ticks), Setting: setting}}, nil)
	if err != nil {
		return nil, err
	}
	late := make([]int64, len(points[0].Latencies))
	for i, l := range points[0].Latencies {
		late[i] = l - int64(period)
	}
	return late, nil
}

// median is the median of xs (the mean of the middle two for an even
// count), without changing xs: the summary of repeated runs.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// ownSchedule times a ticker on its own schedule, on a locked thread with
// the setting the other loops get: start returns the wait of one tick
// (returning its lateness) and stop.
func ownSchedule(ctx context.Context, h seam.Host, setting timerinfo.Setting, ticks, warmup int, start func() (tick func() int64, stop func())) (*loopResult, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_, release, err := h.Apply(setting)
	if err != nil {
		return nil, err
	}
	defer release()
	tick, stop := start()
	defer stop()
	for range warmup {
		tick()
	}
	late := make([]int64, 0, ticks)
	cpuBefore, wallBefore := h.CPUTime(), h.Now()
	stopped := false
	for range ticks {
		if ctx.Err() != nil {
			stopped = true
			break
		}
		late = append(late, tick())
	}
	if len(late) == 0 {
		return nil, sample.ErrNothingMeasured
	}
	return finish(late, float64(h.CPUTime()-cpuBefore)/float64(h.Now()-wallBefore), stopped), nil
}

func finish(late []int64, cpu float64, stopped bool) *loopResult {
	slices.Sort(late)
	early := 0
	for _, l := range late {
		if l < 0 {
			early++
		}
	}
	return &loopResult{Lateness: late, Early: early, CPU: cpu, Stopped: stopped}
}
