package precise_test

import (
	"runtime"
	"strings"
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
	for _, policy := range []precise.MissedPolicy{precise.Skip, precise.Delay, precise.Burst} {
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

func TestHold(t *testing.T) {
	release, err := precise.Hold(time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	release()
}
