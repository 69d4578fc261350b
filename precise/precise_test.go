package precise_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tickscope/tickscope/precise"
)

// These run on the real clock and assert only what must hold on any
// machine, however loaded: no wait ends early, and the counts follow.

func TestSleepNeverReturnsEarly(t *testing.T) {
	for _, d := range []time.Duration{time.Microsecond, 50 * time.Microsecond, 300 * time.Microsecond, time.Millisecond, 2500 * time.Microsecond} {
		for range 20 {
			start := hrNow()
			precise.Sleep(d)
			if got := hrNow() - start; got < d {
				t.Fatalf("Sleep(%v) returned after %v", d, got)
			}
		}
	}
}

func TestSleepUntilNeverReturnsEarly(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Go's clock on Windows follows the timer interrupt: reading it after the wait can lag the deadline that was met")
	}
	for range 20 {
		deadline := time.Now().Add(700 * time.Microsecond)
		precise.SleepUntil(deadline)
		if now := time.Now(); now.Before(deadline) {
			t.Fatalf("SleepUntil returned %v early", deadline.Sub(now))
		}
	}
}

func TestNonPositiveSleepReturnsAtOnce(t *testing.T) {
	start := time.Now()
	precise.Sleep(0)
	precise.Sleep(-time.Second)
	precise.SleepUntil(time.Now().Add(-time.Hour))
	if got := time.Since(start); got > 100*time.Millisecond {
		t.Errorf("non-positive waits took %v", got)
	}
}

func TestStatsAreBoundedAndCount(t *testing.T) {
	before := precise.Stats()
	for range 50 {
		precise.Sleep(time.Millisecond)
	}
	after := precise.Stats()
	if after.Waits < before.Waits+50 {
		t.Errorf("waits %d after %d and 50 more", after.Waits, before.Waits)
	}
	if after.Margin < 10*time.Microsecond || after.Margin > 4*time.Millisecond {
		t.Errorf("margin %v outside its bounds", after.Margin)
	}
	if after.Spun < before.Spun || after.SpinShare < 0 || after.SpinShare > 1 {
		t.Errorf("stats %+v", after)
	}
}

func TestNewTickerPanicsOnNonPositivePeriod(t *testing.T) {
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(r.(string), "non-positive period") {
			t.Errorf("recovered %v, want a clear panic", r)
		}
	}()
	precise.NewTicker(0)
}

func TestTickerKeepsAnAbsoluteSchedule(t *testing.T) {
	const period = 2 * time.Millisecond
	start := hrNow()
	tk := precise.NewTicker(period)
	defer tk.Stop()
	for k := 1; k <= 50; k++ {
		if !tk.Wait() {
			t.Fatal("Wait reported a stopped ticker")
		}
		// Never early against the schedule: tick k is due at start + k ×
		// period (the ticker's own start is a little after ours).
		if at, due := hrNow()-start, time.Duration(k)*period; at < due {
			t.Fatalf("tick %d at %v, due at %v", k, at, due)
		}
	}
}

func TestOverrunningWorkMissesTicks(t *testing.T) {
	const period = 2 * time.Millisecond
	for _, policy := range []precise.MissedPolicy{precise.Skip, precise.Delay, precise.Burst, precise.SkipLate} {
		tk := precise.NewTicker(period, precise.WithMissed(policy))
		start := hrNow()
		for k := 0; k < 10; k++ {
			tk.Wait()
			precise.Sleep(5 * time.Millisecond) // work longer than two periods
		}
		elapsed := hrNow() - start
		if tk.Missed() == 0 {
			t.Errorf("policy %d: work of 5 ms per 2 ms tick missed nothing", policy)
		}
		// Skip keeps the absolute schedule: the next tick is due within one
		// period, whatever happened.
		if policy == precise.Skip && tk.Due() > period {
			t.Errorf("Skip: next tick due in %v, more than a period", tk.Due())
		}
		if elapsed < 10*5*time.Millisecond {
			t.Errorf("policy %d: 10 iterations of 5 ms work took %v", policy, elapsed)
		}
	}
}

func TestStopEndsWait(t *testing.T) {
	tk := precise.NewTicker(time.Millisecond)
	if !tk.Wait() {
		t.Fatal("a running ticker reported stopped")
	}
	tk.Stop()
	if tk.Wait() {
		t.Error("Wait after Stop reported running")
	}
}

func TestSleepContext(t *testing.T) {
	// A full wait: nil, never early.
	for _, d := range []time.Duration{0, 300 * time.Microsecond, 3 * time.Millisecond} {
		start := hrNow()
		if err := precise.SleepContext(context.Background(), d); err != nil {
			t.Fatalf("SleepContext(%v): %v", d, err)
		}
		if got := hrNow() - start; got < d {
			t.Fatalf("SleepContext(%v) returned after %v", d, got)
		}
	}
	// A context done already: its error, at once.
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if err := precise.SleepContext(done, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled context: %v", err)
	}
	// Cancelled during an hour's wait: its error (a broken SleepContext
	// would hang here until the test's timeout).
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(5 * time.Millisecond); cancel() }()
	if err := precise.SleepContext(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled while waiting: %v", err)
	}
}

// Stop from another goroutine and a done context both end a Wait that is
// sleeping towards an hour-long tick.
func TestTickerStopsWhileWaiting(t *testing.T) {
	tk := precise.NewTicker(time.Hour)
	go func() { time.Sleep(5 * time.Millisecond); tk.Stop() }()
	if tk.Wait() {
		t.Error("Stop: Wait reported running")
	}
	tk.Stop() // twice is fine

	ctx, cancel := context.WithCancel(context.Background())
	tk = precise.NewTicker(time.Hour, precise.WithContext(ctx))
	defer tk.Stop()
	go func() { time.Sleep(5 * time.Millisecond); cancel() }()
	if tk.Wait() {
		t.Error("context: Wait reported running")
	}
	if tk.Wait() {
		t.Error("context: a second Wait reported running")
	}
}

func TestTickerReset(t *testing.T) {
	// Reset from another goroutine moves an hour-long tick to 1 ms after
	// the Reset: Wait returns true, never before it.
	tk := precise.NewTicker(time.Hour)
	defer tk.Stop()
	var resetAt atomic.Int64
	go func() {
		time.Sleep(5 * time.Millisecond)
		resetAt.Store(int64(hrNow()))
		tk.Reset(time.Millisecond)
	}()
	if !tk.Wait() {
		t.Fatal("Wait after Reset reported stopped")
	}
	if at := hrNow(); int64(at) < resetAt.Load()+int64(time.Millisecond) {
		t.Fatalf("tick %v after the Reset, want at least 1ms", time.Duration(int64(at)-resetAt.Load()))
	}
	// The schedule continues at the new period: tick k after the Reset's
	// is due k ms after it, at least k+1 ms after the Reset. (Timing from
	// when the first Wait returned would not do: a return preempted past
	// the next tick's due time makes the absolute schedule look early.)
	for k := 1; k <= 5; k++ {
		tk.Wait()
		if got := int64(hrNow()) - resetAt.Load(); got < int64(k+1)*int64(time.Millisecond) {
			t.Fatalf("tick %d after the reset one came %v after the Reset, want at least %v", k, time.Duration(got), time.Duration(k+1)*time.Millisecond)
		}
	}
	defer func() {
		if r := recover(); r == nil {
			t.Error("Reset(0) did not panic")
		}
	}()
	tk.Reset(0)
}

func TestWithTailKeepsBoundsAndNeverEarly(t *testing.T) {
	const period = time.Millisecond
	start := hrNow()
	tk := precise.NewTicker(period, precise.WithTail(0.999))
	defer tk.Stop()
	for k := 1; k <= 50; k++ {
		tk.Wait()
		if at := hrNow() - start; at < time.Duration(k)*period {
			t.Fatalf("tick %d at %v", k, at)
		}
	}
	if m := tk.Margin(); m < 10*time.Microsecond || m > 4*time.Millisecond {
		t.Errorf("margin %v outside its bounds", m)
	}
}

// WithMargin keeps the margin it is given, whatever the ticks show, and a
// negative one is none; the ticks are never early.
func TestWithMarginIsFixed(t *testing.T) {
	const period = time.Millisecond
	for _, tt := range []struct{ give, want time.Duration }{
		{125 * time.Microsecond, 125 * time.Microsecond},
		{3 * time.Microsecond, 3 * time.Microsecond},
		{-time.Microsecond, 0},
	} {
		start := hrNow()
		tk := precise.NewTicker(period, precise.WithMargin(tt.give))
		for k := 1; k <= 40; k++ {
			tk.Wait()
			if at := hrNow() - start; at < time.Duration(k)*period {
				t.Fatalf("WithMargin(%v): tick %d at %v", tt.give, k, at)
			}
		}
		tk.Stop()
		if m := tk.Margin(); m != tt.want {
			t.Errorf("WithMargin(%v): margin %v after 40 ticks, want %v", tt.give, m, tt.want)
		}
	}
}
