// Package sample times a wait method on a host's high-resolution clock. It
// holds tickscope's one measurement loop: measure, bench and every later
// command take their samples through Measure.
package sample

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// Limits on the number of samples in one point.
const (
	MaxSamples = 100_000
)

// Spec says what to measure.
type Spec struct {
	Method  string
	Delay   time.Duration
	Samples int
	// Warmup samples are taken first and discarded: the first waits after a
	// thread starts or a setting changes pay for page faults, cache misses
	// and the timer's first reprogramming.
	Warmup  int
	Setting timerinfo.Setting
	// Observer, when set, is told of every wait on the measuring thread
	// (explain reads the thread's counters around each).
	Observer WaitObserver
}

// WaitObserver is told of each wait, on the measuring thread, which is
// locked to its OS thread: Begin once the setting is applied and the
// waiter made, with the thread's timer slack, then BeforeWait and
// AfterWait around every wait, warm-up included (i < 0). Its work between
// the waits is the measurement's cost: keep it small.
type WaitObserver interface {
	Begin(slackNS int64) error
	BeforeWait()
	// AfterWait is given the wait's index among the samples (negative
	// during warm-up), its deadline, when it began and when it ended, on
	// the host's clock.
	AfterWait(i int, deadline, start, end int64)
}

// DefaultWarmup is the warm-up for n samples: 1 %, at least 5, at most 100.
func DefaultWarmup(n int) int { return min(max(n/100, 5), 100) }

// Progress is told how many samples (warm-up included) are done out of how
// many. It is called from the measuring goroutine: keep it cheap.
type Progress func(done, total int)

// Measure takes spec.Samples samples of one wait method under one setting
// and returns them as a raw-file point: the latencies in the order taken, in
// ns (for a relative method the wait's duration, for a periodic one the delay
// plus its lateness past the deadline), what was requested and granted, and
// the conditions. When ctx ends the run early the point is marked Stopped and
// holds what was measured until then.
// It runs on a fresh goroutine locked to its OS thread, which it never
// unlocks, so the thread (with its raised priority and timer slack) ends with
// the measurement instead of returning to Go's pool changed. On a host that
// is a seam.ThreadEnder, Measure returns only once the OS has ended that
// thread, so that a process which exits right after measuring never exits
// while a thread of its own is still ending.
func Measure(ctx context.Context, h seam.Host, spec Spec, progress Progress) (*rawfile.Point, error) {
	if spec.Samples < 1 || spec.Samples > MaxSamples {
		return nil, fmt.Errorf("samples %d outside 1..%d", spec.Samples, MaxSamples)
	}
	method, err := seam.FindMethod(h, spec.Method)
	if err != nil {
		return nil, err
	}
	type outcome struct {
		res *rawfile.Point
		err error
		// ended waits until the OS has ended the measuring thread.
		ended func()
	}
	done := make(chan outcome, 1)
	go func() {
		runtime.LockOSThread()
		ended := func() {}
		if e, ok := h.(seam.ThreadEnder); ok {
			ended = e.ThreadEnding()
		}
		res, err := measureLocked(ctx, h, method, spec, progress)
		done <- outcome{res, err, ended}
	}()
	o := <-done
	o.ended()
	return o.res, o.err
}

func measureLocked(ctx context.Context, h seam.Host, method seam.Method, spec Spec, progress Progress) (res *rawfile.Point, err error) {
	res = &rawfile.Point{Requested: spec.Setting, Warmup: spec.Warmup}
	res.Conditions.CurrentBefore100ns = h.Observe().Current100ns
	priority, restorePriority := h.PrepareThread()
	defer restorePriority()
	res.Conditions.Priority = priority

	granted, release, err := h.Apply(spec.Setting)
	if err != nil {
		return nil, err
	}
	defer func() {
		if relErr := release(); relErr != nil && err == nil {
			err = relErr
		}
		res.Conditions.CurrentAfter100ns = h.Observe().Current100ns
	}()
	res.Granted = granted
	held := h.Observe()
	res.Conditions.TimerSlackNs, res.Conditions.TimerThrottling = held.TimerSlackNs, held.TimerThrottling

	w, err := h.NewWaiter(method.Name, spec.Delay)
	if err != nil {
		return nil, err
	}
	defer w.Close()

	var stops *stopLog
	if sw, ok := h.(seam.StopWatcher); ok {
		watch, err := sw.WatchStops()
		if err != nil {
			return nil, err
		}
		if watch != nil {
			defer watch.Close()
			n := spec.Warmup + spec.Samples
			stops = &stopLog{watch: watch, delay: int64(spec.Delay), begun: h.Now(), ends: make([]int64, 0, n), starts: make([]int64, 0, n)}
		}
	}

	if spec.Observer != nil {
		if err := spec.Observer.Begin(held.TimerSlackNs); err != nil {
			return nil, err
		}
	}
	cpuBefore, wallBefore := h.CPUTime(), h.Now()
	res.Latencies, res.Overruns, res.Stopped, err = loop(ctx, h, w, method.Schedule, spec, progress, stops)
	res.Conditions.CPUNs, res.Conditions.WallNs = int64(h.CPUTime()-cpuBefore), h.Now()-wallBefore
	if err == nil && stops != nil {
		stops.awaitLate(ctx, h.Now())
		res.NotRunning, err = stops.notRunning(spec.Warmup, len(res.Latencies), h.Now())
	}
	return res, err
}

// loop is the measurement loop itself, kept free of everything else so that
// its cost per sample is what BenchmarkLoop measures.
// stops (nil when the host cannot tell) is told of each wait.
func loop(ctx context.Context, h seam.Host, w seam.Waiter, schedule seam.Schedule, spec Spec, progress Progress, stops *stopLog) (latencies []int64, overruns int, stopped bool, err error) {
	delay := int64(spec.Delay)
	total := spec.Warmup + spec.Samples
	latencies = make([]int64, 0, spec.Samples)
	stop := ctx.Done()
	deadline := h.Now()
	if stops != nil {
		stops.start = deadline
	}
	var suspended int64
	for i := 0; i < total; i++ {
		select {
		case <-stop:
			return latencies, overruns, true, nil
		default:
		}
		if stops != nil {
			suspended = stops.watch.Suspended()
		}
		if spec.Observer != nil {
			spec.Observer.BeforeWait()
		}
		start := h.Now()
		if schedule == seam.Periodic {
			deadline += delay
			for deadline <= start {
				deadline += delay
				overruns++
			}
		} else {
			deadline = start + delay
		}
		if err := w.Wait(deadline); err != nil {
			return latencies, overruns, false, err
		}
		end := h.Now()
		// A periodic waiter that keeps a schedule of its own (a ticker
		// made at the first wait, a little after this loop's) can deliver,
		// after a stall, a tick this loop had already counted as overrun.
		// The wait is then the period it belongs to, not a later one, which
		// would read as a negative latency. It never goes back behind the
		// previous wait's deadline: that wait ended at or after its period
		// began, and this one ended after it. Two wake-ups then share a
		// period, which is what the waiter did.
		for schedule == seam.Periodic && overruns > 0 && deadline-delay > end {
			deadline -= delay
			overruns--
		}
		if i >= spec.Warmup {
			latencies = append(latencies, end-deadline+delay)
		}
		if spec.Observer != nil {
			spec.Observer.AfterWait(i-spec.Warmup, deadline, start, end)
		}
		if stops != nil {
			stops.waited(i-spec.Warmup, start, end, suspended)
		}
		if progress != nil && (i&63 == 63 || i == total-1) {
			progress(i+1, total)
		}
	}
	return latencies, overruns, false, nil
}
