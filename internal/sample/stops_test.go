package sample_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
)

// stoppingHost is a fakeHost whose process is stopped by job control for
// stopNs during wait stopAt (warm-up included), and told of it (SIGCONT
// received) only lag waits later, as a signal reaches another thread
// after the measuring one ran again; and whose machine is suspended for
// suspendNs during wait suspendAt.
type stoppingHost struct {
	fakeHost
	stopAt, lag int
	stopNs      int64
	suspendAt   int
	suspendNs   int64

	suspended int64
	continued []int64
	closed    bool
}

func (h *stoppingHost) NewWaiter(string, time.Duration) (seam.Waiter, error) { return h, nil }

func (h *stoppingHost) Wait(deadline int64) error {
	i := h.waits
	if err := h.fakeHost.Wait(deadline); err != nil {
		return err
	}
	if i == h.stopAt {
		h.now += h.stopNs
	}
	if i == h.suspendAt {
		h.suspended += h.suspendNs
	}
	if i == h.stopAt+h.lag {
		h.continued = append(h.continued, h.now+100)
	}
	return nil
}

func (h *stoppingHost) WatchStops() (seam.StopWatch, error) { return stoppingWatch{h}, nil }

type stoppingWatch struct{ h *stoppingHost }

func (w stoppingWatch) Suspended() int64   { return w.h.suspended }
func (w stoppingWatch) Continued() []int64 { return w.h.continued }
func (w stoppingWatch) Close()             { w.h.closed = true }

// A stop during a wait is placed on that wait's sample, though its
// continue is seen waits later; the samples around it are kept, and
// Running leaves it out of what is judged.
func TestStopIsPlacedOnItsWait(t *testing.T) {
	for _, schedule := range []seam.Schedule{seam.Relative, seam.Periodic} {
		for _, lag := range []int{0, 1, 3, 20} {
			h := &stoppingHost{fakeHost: fakeHost{lateness: []int64{50_000}, schedule: schedule}, stopAt: 7, lag: lag, stopNs: int64(2 * time.Second), suspendAt: -1}
			p, err := sample.Measure(context.Background(), h, spec(40, 2), nil)
			if err != nil {
				t.Fatal(err)
			}
			nr := p.NotRunning
			if nr == nil || !slices.Equal(nr.Samples, []int{5}) || nr.Continued != 1 || nr.SuspendedNs != 0 {
				t.Fatalf("schedule %d, continue seen %d waits late: not running %+v, want sample 5 (wait 7 less 2 of warm-up), 1 continue", schedule, lag, nr)
			}
			if p.Latencies[5] < int64(2*time.Second) {
				t.Errorf("the stopped sample is %d ns, want over the 2 s stop", p.Latencies[5])
			}
			running := p.Running()
			if len(running) != 39 || slices.Max(running) != delay+50_000 {
				t.Errorf("schedule %d, lag %d: running samples %d, max %d; want 39 and the timer's %d", schedule, lag, len(running), slices.Max(running), delay+50_000)
			}
			if !h.closed {
				t.Error("the watch was not closed")
			}
		}
	}
}

// A suspend is placed on the wait across which the suspended time grew;
// a stop in the warm-up marks no sample but is counted.
func TestSuspendAndWarmupStop(t *testing.T) {
	h := &stoppingHost{fakeHost: fakeHost{lateness: []int64{0}, schedule: seam.Relative}, stopAt: 1, lag: 2, stopNs: int64(time.Second), suspendAt: 10, suspendNs: int64(5 * time.Second)}
	p, err := sample.Measure(context.Background(), h, spec(20, 3), nil)
	if err != nil {
		t.Fatal(err)
	}
	nr := p.NotRunning
	if nr == nil || !slices.Equal(nr.Samples, []int{7}) || nr.Continued != 1 || nr.SuspendedNs != int64(5*time.Second) {
		t.Fatalf("not running %+v, want sample 7 suspended for 5 s and 1 continue placed in the warm-up", nr)
	}
}

// A process that ran throughout records nothing.
func TestRunningThroughoutRecordsNothing(t *testing.T) {
	h := &stoppingHost{fakeHost: fakeHost{lateness: []int64{3_000_000, 0}, schedule: seam.Periodic}, stopAt: -100, suspendAt: -1}
	p, err := sample.Measure(context.Background(), h, spec(50, 5), nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.NotRunning != nil {
		t.Errorf("not running %+v for a process that ran throughout", p.NotRunning)
	}
}

// A SIGCONT sent to a process that was not stopped is placed on the
// longest wait of the second before it; it marks that wait only if the
// wait was clearly held up (StopMinNs beyond the median, here 50 µs
// late), so a real 3 ms outlier is kept and judged, while a 6 ms stop is
// left out. Either continue is counted.
func TestStrayContinueKeepsAnOutlier(t *testing.T) {
	for _, tc := range []struct {
		heldUp time.Duration
		marked []int
	}{{3 * time.Millisecond, nil}, {6 * time.Millisecond, []int{5}}} {
		h := &stoppingHost{fakeHost: fakeHost{lateness: []int64{50_000}, schedule: seam.Relative}, stopAt: 7, lag: 2, stopNs: int64(tc.heldUp), suspendAt: -1}
		p, err := sample.Measure(context.Background(), h, spec(40, 2), nil)
		if err != nil {
			t.Fatal(err)
		}
		nr := p.NotRunning
		if nr == nil || !slices.Equal(nr.Samples, tc.marked) || nr.Continued != 1 {
			t.Errorf("a continue after a wait held up %v: not running %+v, want samples %v and 1 continue", tc.heldUp, nr, tc.marked)
		}
	}
}

// lateHost is a stoppingHost whose watch can wait for a continue
// (seam.ContinueAwaiter): the continue of a stop in the last wait is told
// only once the measurement waits for it, as a signal reaching another
// thread after the loop ended is.
type lateHost struct {
	stoppingHost
	awaited []time.Duration
}

func (h *lateHost) WatchStops() (seam.StopWatch, error) {
	return lateWatch{stoppingWatch{&h.stoppingHost}, h}, nil
}

type lateWatch struct {
	stoppingWatch
	h *lateHost
}

func (w lateWatch) AwaitContinue(since int64, timeout time.Duration) {
	w.h.awaited = append(w.h.awaited, timeout)
	sh := &w.h.stoppingHost
	if sh.stopAt >= sh.waits-1 { // the stop was in the last wait
		sh.now += 100
		sh.continued = append(sh.continued, sh.now)
	}
}

// A stop in the last wait, whose continue is told after the loop ended,
// is placed on that wait: the measurement waits for the continue (within
// MaxContinueDelay of the wait's end) when the last wait was clearly held
// up, and not when it was the timer's.
func TestLateContinueOfTheLastWait(t *testing.T) {
	h := &lateHost{stoppingHost: stoppingHost{fakeHost: fakeHost{lateness: []int64{50_000}, schedule: seam.Relative}, stopAt: 41, lag: 1000, stopNs: int64(2 * time.Second), suspendAt: -1}}
	p, err := sample.Measure(context.Background(), h, spec(40, 2), nil)
	if err != nil {
		t.Fatal(err)
	}
	if nr := p.NotRunning; nr == nil || !slices.Equal(nr.Samples, []int{39}) || nr.Continued != 1 {
		t.Errorf("not running %+v, want the last sample, 39, and 1 continue", nr)
	}
	if len(h.awaited) != 1 || h.awaited[0] <= 0 || h.awaited[0] > sample.MaxContinueDelay {
		t.Errorf("waited for a continue %v, want once, within %v", h.awaited, sample.MaxContinueDelay)
	}
	quiet := &lateHost{stoppingHost: stoppingHost{fakeHost: fakeHost{lateness: []int64{50_000}, schedule: seam.Relative}, stopAt: -100, suspendAt: -1}}
	if _, err := sample.Measure(context.Background(), quiet, spec(40, 2), nil); err != nil {
		t.Fatal(err)
	}
	if len(quiet.awaited) != 0 {
		t.Errorf("waited for a continue %v after a last wait of the timer's", quiet.awaited)
	}
}

// stopBetweenWaits is an observer that stops the fake process for stopNs
// in the loop's work before wait stopAt, before the clock read that
// begins it.
type stopBetweenWaits struct {
	h      *stoppingHost
	stopAt int
	stopNs int64
	waits  int
}

func (o *stopBetweenWaits) Begin(int64) error { return nil }
func (o *stopBetweenWaits) BeforeWait() {
	if o.waits == o.stopAt {
		o.h.now += o.stopNs
	}
	o.waits++
}
func (o *stopBetweenWaits) AfterWait(int, int64, int64, int64) {}

// A stop in the loop's work between two waits holds up no sample: the
// next wait's deadline follows the clock read after it (a periodic
// schedule skips the periods it missed), so its continue is counted and
// marks nothing, and no sample of the timer's is left out.
func TestStopBetweenWaitsMarksNoSample(t *testing.T) {
	for _, schedule := range []seam.Schedule{seam.Relative, seam.Periodic} {
		h := &stoppingHost{fakeHost: fakeHost{lateness: []int64{50_000}, schedule: schedule}, stopAt: 7, lag: 1, stopNs: 0, suspendAt: -1}
		s := spec(40, 2)
		s.Observer = &stopBetweenWaits{h: h, stopAt: 7, stopNs: int64(2 * time.Second)}
		p, err := sample.Measure(context.Background(), h, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		nr := p.NotRunning
		if nr == nil || len(nr.Samples) != 0 || nr.Continued != 1 {
			t.Fatalf("schedule %d: not running %+v, want 1 continue and no sample marked", schedule, nr)
		}
		if slices.Max(p.Latencies) >= int64(time.Second) || len(p.Running()) != 40 {
			t.Errorf("schedule %d: max sample %d ns, %d running; want every sample the timer's", schedule, slices.Max(p.Latencies), len(p.Running()))
		}
	}
}
