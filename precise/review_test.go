package precise

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"
)

// A context done before NewTicker: Stop runs at once, on this goroutine,
// and Wait returns false (run with -race: the AfterFunc used to race with
// NewTicker's write of stopCtx).
func TestTickerWithCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := 0; i < 100; i++ {
		tk := NewTicker(time.Millisecond, WithContext(ctx))
		if tk.Wait() {
			t.Fatal("Wait returned true on a ticker whose context was done")
		}
		tk.Stop()
	}
}

// A context cancelled concurrently with NewTicker: no race, and Wait
// returns false once ctx.Err() is set, whether Stop has run yet or not.
func TestTickerContextCancelledConcurrently(t *testing.T) {
	for i := 0; i < 100; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); cancel() }()
		tk := NewTicker(time.Hour, WithContext(ctx))
		wg.Wait()
		if tk.Wait() {
			t.Fatal("Wait returned true after the context was cancelled")
		}
		tk.Stop()
	}
}

// Wait checks the context itself: cancel, then Wait, is false at once on
// this goroutine, not after the AfterFunc's Stop gets to run.
func TestWaitSeesContextDoneWithoutStop(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	tk := NewTicker(time.Hour, WithContext(ctx))
	defer tk.Stop()
	cancel()
	if tk.Wait() {
		t.Fatal("Wait returned true after cancel")
	}
}

// A Reset arriving while Wait is past its Go timer (period 1.9 ms, under
// the interruptible 2 ms) must not count the new schedule's ticks that
// passed before Wait saw it as missed, under any policy; and the tick
// Wait returns is never early.
func TestResetDuringNativeSleepCountsNoMissed(t *testing.T) {
	// The Reset is sent once Wait has read its tick and begun to wait
	// (waitHook), so it always comes during the wait, however the machine
	// preempts this test; started from a goroutine of its own, a Reset
	// could land before a preempted Wait read the schedule, which is an
	// overrun the policy rightly counts.
	waiting := make(chan int64, 1)
	waitHook = func() {
		select {
		case waiting <- now():
		default:
		}
	}
	t.Cleanup(func() { waitHook = nil })
	for _, policy := range []MissedPolicy{Skip, Delay, Burst} {
		for i := 0; i < 20; i++ {
			const period = 1900 * time.Microsecond
			const newPeriod = 20 * time.Microsecond
			// start is read before NewTicker, so start+period is no later
			// than the first tick's due time.
			start := now()
			tk := NewTicker(period, WithMissed(policy))
			resetAt := make(chan int64, 1)
			waitedAt := make(chan int64, 1)
			go func() {
				w := <-waiting
				waitedAt <- w
				time.Sleep(300 * time.Microsecond)
				r := now()
				tk.Reset(newPeriod)
				resetAt <- r
			}()
			if !tk.Wait() {
				t.Fatal("Wait returned false")
			}
			woke := now()
			r, w := <-resetAt, <-waitedAt
			// A Wait that began to wait a period or more after NewTicker
			// (preempted in between) overran the old schedule before any
			// Reset, and counts it as it should.
			if m := tk.Missed(); m != 0 && w-start < int64(period) {
				t.Fatalf("policy %d: Missed() = %d after a Reset during Wait, want 0", policy, m)
			}
			// Never early: at or after the first tick due, on the old
			// schedule or the Reset's.
			if earliest := min(start+int64(period), r+int64(newPeriod)); woke < earliest {
				t.Fatalf("policy %d: Wait returned %v before its tick", policy, time.Duration(earliest-woke))
			}
			tk.Stop()
			// Wait's second pass (after the Reset) runs the hook again:
			// leave the channel empty for the next round.
			select {
			case <-waiting:
			default:
			}
		}
	}
}

// The native sleep and the spin see a Reset or a Stop when checked.
func TestSleepUntilAbort(t *testing.T) {
	if sleepUntil(cal, now()+int64(time.Hour), func() bool { return true }) {
		t.Fatal("sleepUntil with an abort reporting true waited")
	}
	if !sleepUntil(cal, now()+int64(50*time.Microsecond), func() bool { return false }) {
		t.Fatal("sleepUntil with an abort reporting false did not wait")
	}
}

func TestDeadlineAfterSaturates(t *testing.T) {
	if got := deadlineAfter(math.MaxInt64); got != math.MaxInt64 {
		t.Fatalf("deadlineAfter(MaxInt64) = %d, want MaxInt64", got)
	}
	if got := deadlineAfter(math.MaxInt64 - 1); got != math.MaxInt64 {
		t.Fatalf("deadlineAfter(MaxInt64-1) = %d, want MaxInt64", got)
	}
	before := now()
	got := deadlineAfter(time.Second)
	if got < before+int64(time.Second) || got > now()+int64(time.Second) {
		t.Fatalf("deadlineAfter(1s) = %d, not within [%d, now+1s]", got, before+int64(time.Second))
	}
}

func TestSleepContextHugeDuration(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := SleepContext(ctx, math.MaxInt64); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: got %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	// Before the fix the deadline wrapped negative and this returned nil
	// at once.
	if err := SleepContext(ctx, math.MaxInt64); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("timeout: got %v, want context.DeadlineExceeded", err)
	}
}

func TestTickerHugePeriodIsNotDue(t *testing.T) {
	tk := NewTicker(math.MaxInt64)
	defer tk.Stop()
	if tk.Due() <= 0 {
		t.Fatalf("NewTicker(MaxInt64).Due() = %v, want positive", tk.Due())
	}
	tk.Reset(math.MaxInt64)
	if tk.Due() <= 0 {
		t.Fatalf("after Reset(MaxInt64), Due() = %v, want positive", tk.Due())
	}
}
