package sample_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// fakeHost is a host on a virtual clock: each wait advances the clock to the
// deadline (periodic) or by the delay (relative), plus a scripted lateness.
type fakeHost struct {
	now      int64
	lateness []int64 // per wait, cycled
	waits    int
	schedule seam.Schedule
	released bool
	failAt   int
	onWait   func(i int)
	// applied is set by Apply: Observe then reports the throttling opt-out
	// the Windows host makes before it holds a period.
	applied bool
}

func (h *fakeHost) Query() (*timerinfo.Report, error) { return &timerinfo.Report{OS: "fake"}, nil }
func (h *fakeHost) Methods() []seam.Method {
	return []seam.Method{{Name: "fake", Schedule: h.schedule}}
}
func (h *fakeHost) Now() int64                      { return h.now }
func (h *fakeHost) PrepareThread() (string, func()) { return "fake priority", func() {} }
func (h *fakeHost) Observe() seam.Observation {
	o := seam.Observation{Current100ns: 156250}
	if h.applied {
		o.TimerThrottling = timerinfo.ThrottlingOptedOut
	}
	return o
}
func (h *fakeHost) NewWaiter(string, time.Duration) (seam.Waiter, error) {
	return h, nil
}
func (h *fakeHost) Apply(s timerinfo.Setting) (timerinfo.Setting, func() error, error) {
	granted := s
	granted.Resolution100ns -= s.Resolution100ns % 10 // a quantised grant
	h.applied = s.Resolution100ns != 0
	return granted, func() error { h.released = true; return nil }, nil
}

var delay = int64(time.Millisecond)

func (h *fakeHost) Wait(deadline int64) error {
	i := h.waits
	h.waits++
	if h.onWait != nil {
		h.onWait(i)
	}
	if h.failAt > 0 && i == h.failAt {
		return errors.New("wait failed")
	}
	late := h.lateness[i%len(h.lateness)]
	if h.schedule == seam.Periodic {
		h.now = max(h.now, deadline) + late
	} else {
		h.now += delay + late
	}
	return nil
}
func (h *fakeHost) Close() error           { return nil }
func (h *fakeHost) CPUTime() time.Duration { return 0 }

func spec(samples, warmup int) sample.Spec {
	return sample.Spec{Method: "fake", Delay: time.Duration(delay), Samples: samples, Warmup: warmup, Setting: timerinfo.Setting{Resolution100ns: 5068}}
}

func TestRelativeSamplesAreWaitDurations(t *testing.T) {
	h := &fakeHost{lateness: []int64{100, 200, 300}, schedule: seam.Relative}
	p, err := sample.Measure(context.Background(), h, spec(6, 2), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Warm-up waits 0 and 1 (lateness 100, 200) are dropped.
	want := []int64{delay + 300, delay + 100, delay + 200, delay + 300, delay + 100, delay + 200}
	if len(p.Latencies) != len(want) {
		t.Fatalf("got %d samples, want %d", len(p.Latencies), len(want))
	}
	for i := range want {
		if p.Latencies[i] != want[i] {
			t.Errorf("sample %d = %d, want %d", i, p.Latencies[i], want[i])
		}
	}
	if p.Warmup != 2 || !h.released || p.Granted.Resolution100ns != 5060 || p.Requested.Resolution100ns != 5068 {
		t.Errorf("point = %+v, released %v", p, h.released)
	}
	if p.Conditions.Priority != "fake priority" || p.Conditions.CurrentBefore100ns != 156250 {
		t.Errorf("conditions = %+v", p.Conditions)
	}
}

func TestPeriodicSamplesAreDelayPlusLateness(t *testing.T) {
	h := &fakeHost{lateness: []int64{50_000}, schedule: seam.Periodic}
	p, err := sample.Measure(context.Background(), h, spec(100, 0), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range p.Latencies {
		if v != delay+50_000 {
			t.Fatalf("sample %d = %d, want %d", i, v, delay+50_000)
		}
	}
	// The schedule stays absolute: 100 deadlines 1 ms apart, the last one
	// 50 µs late, whatever the lateness of the ones before.
	if want := 100*delay + 50_000; h.now != want {
		t.Errorf("clock ended at %d, want %d: the schedule drifted", h.now, want)
	}
	if p.Overruns != 0 {
		t.Errorf("overruns = %d", p.Overruns)
	}
}

func TestPeriodicSkipsPassedDeadlines(t *testing.T) {
	// The second wait is 3.5 ms late: the next three deadlines have passed.
	h := &fakeHost{lateness: []int64{0, 3_500_000, 0, 0, 0, 0}, schedule: seam.Periodic}
	p, err := sample.Measure(context.Background(), h, spec(6, 0), nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Overruns != 3 {
		t.Errorf("overruns = %d, want 3", p.Overruns)
	}
	// What a raw file's reader holds overruns to: no more delays than fit
	// in the point's wall time.
	if int64(p.Overruns) > p.Conditions.WallNs/delay {
		t.Errorf("overruns = %d in a wall time of %d ns: more than the reader accepts", p.Overruns, p.Conditions.WallNs)
	}
	if p.Latencies[1] != delay+3_500_000 {
		t.Errorf("late sample = %d", p.Latencies[1])
	}
}

func TestStopKeepsWhatWasMeasured(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	h := &fakeHost{lateness: []int64{0}, schedule: seam.Relative}
	h.onWait = func(i int) {
		if i == 9 {
			cancel()
		}
	}
	p, err := sample.Measure(ctx, h, spec(100, 5), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Stopped || len(p.Latencies) != 5 {
		t.Errorf("stopped=%v with %d samples, want stopped with 5 (10 waits minus 5 warm-up)", p.Stopped, len(p.Latencies))
	}
	if !h.released {
		t.Error("the setting was not released after an early stop")
	}
}

func TestWaitErrorReleasesAndFails(t *testing.T) {
	h := &fakeHost{lateness: []int64{0}, schedule: seam.Relative, failAt: 3}
	if _, err := sample.Measure(context.Background(), h, spec(10, 0), nil); err == nil {
		t.Fatal("a failing wait was not reported")
	}
	if !h.released {
		t.Error("the setting was not released after a failure")
	}
}

func TestProgressReachesTotal(t *testing.T) {
	h := &fakeHost{lateness: []int64{0}, schedule: seam.Relative}
	last, calls := 0, 0
	_, err := sample.Measure(context.Background(), h, spec(200, 10), func(done, total int) {
		calls++
		if done < last || total != 210 {
			t.Errorf("progress(%d, %d) after %d", done, total, last)
		}
		last = done
	})
	if err != nil {
		t.Fatal(err)
	}
	if last != 210 || calls > 10 {
		t.Errorf("progress ended at %d after %d calls", last, calls)
	}
}

func TestBadSpec(t *testing.T) {
	h := &fakeHost{lateness: []int64{0}}
	for _, s := range []sample.Spec{spec(0, 0), spec(sample.MaxSamples+1, 0), {Method: "nope", Samples: 1, Delay: time.Millisecond}} {
		if _, err := sample.Measure(context.Background(), h, s, nil); err == nil {
			t.Errorf("spec %+v accepted", s)
		}
	}
}

func TestDefaultWarmup(t *testing.T) {
	for _, tt := range []struct{ n, want int }{{1, 5}, {1000, 10}, {50_000, 100}, {100_000, 100}} {
		if got := sample.DefaultWarmup(tt.n); got != tt.want {
			t.Errorf("DefaultWarmup(%d) = %d, want %d", tt.n, got, tt.want)
		}
	}
}

// TestConditionsRecordTheThrottlingOptOut: the outcome of the opt-out the
// host made before it held the period is recorded with the samples, which
// were taken with the request in force only if it held.
func TestConditionsRecordTheThrottlingOptOut(t *testing.T) {
	h := &fakeHost{lateness: []int64{100}, schedule: seam.Relative}
	p, err := sample.Measure(context.Background(), h, spec(3, 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Conditions.TimerThrottling != timerinfo.ThrottlingOptedOut {
		t.Errorf("conditions record throttling %q, want %q", p.Conditions.TimerThrottling, timerinfo.ThrottlingOptedOut)
	}
}

// endingHost is a fakeHost that is a seam.ThreadEnder: its wait blocks
// until the test lets the thread "end".
type endingHost struct {
	*fakeHost
	askedBeforeWaits bool
	waiting          chan struct{} // closed when the wait starts
	ended            chan struct{} // closed by the test: the thread has ended
	measuredFirst    bool
}

func (h *endingHost) ThreadEnding() func() {
	h.askedBeforeWaits = h.waits == 0
	return func() {
		h.measuredFirst = h.released
		close(h.waiting)
		<-h.ended
	}
}

// Measure returns only once the host says the measuring thread has ended:
// a process that exits right after measuring must not exit while that
// thread is still ending (seam.ThreadEnder says why).
func TestMeasureWaitsForItsThreadToEnd(t *testing.T) {
	h := &endingHost{
		fakeHost: &fakeHost{lateness: []int64{0}, schedule: seam.Relative},
		waiting:  make(chan struct{}),
		ended:    make(chan struct{}),
	}
	returned := make(chan error, 1)
	go func() {
		_, err := sample.Measure(context.Background(), h, spec(10, 0), nil)
		returned <- err
	}()
	select {
	case <-h.waiting:
	case err := <-returned:
		t.Fatalf("Measure returned (%v) without waiting for its thread to end", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Measure never waited for its thread to end")
	}
	select {
	case err := <-returned:
		t.Fatalf("Measure returned (%v) before its thread had ended", err)
	case <-time.After(20 * time.Millisecond):
	}
	close(h.ended)
	if err := <-returned; err != nil {
		t.Fatal(err)
	}
	if !h.askedBeforeWaits || !h.measuredFirst {
		t.Errorf("ThreadEnding asked before the waits: %v; waited for after the measurement: %v; want both", h.askedBeforeWaits, h.measuredFirst)
	}
}
