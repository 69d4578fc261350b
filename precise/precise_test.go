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
	if runtime.GOOS == "windows" {
		t.Skip("the ticks' stamps come from Go's clock, which on Windows follows the timer interrupt")
	}
	const period = 2 * time.Millisecond
	start := time.Now()
	tk := precise.NewTicker(period)
	defer tk.Stop()
	for k := 1; k <= 50; k++ {
		at := <-tk.C
		// Never early against the schedule: tick k is due at start + k × period
		// (the ticker's own start is a little after ours).
		if due := start.Add(time.Duration(k) * period); at.Before(due) {
			t.Fatalf("tick %d at %v, due at %v", k, at.Sub(start), due.Sub(start))
		}
	}
}

func TestSlowReceiverMissesTicks(t *testing.T) {
	const period = 2 * time.Millisecond
	for _, policy := range []precise.MissedPolicy{precise.Skip, precise.Delay, precise.Burst} {
		tk := precise.NewTicker(period, precise.WithMissed(policy))
		for range 10 {
			<-tk.C
			time.Sleep(5 * time.Millisecond) // work longer than two periods
		}
		tk.Stop()
		if tk.Missed() == 0 {
			t.Errorf("policy %d: a receiver taking 5 ms per 2 ms tick missed nothing", policy)
		}
	}
}

func TestStopEndsTicks(t *testing.T) {
	tk := precise.NewTicker(time.Millisecond)
	<-tk.C
	tk.Stop()
	// At most the tick already buffered may still arrive.
	select {
	case <-tk.C:
	default:
	}
	select {
	case <-tk.C:
		t.Error("a tick arrived after Stop")
	case <-time.After(20 * time.Millisecond):
	}
}

func TestHold(t *testing.T) {
	release, err := precise.Hold(time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	release()
}
