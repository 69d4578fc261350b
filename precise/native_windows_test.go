package precise_test

import (
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/platform/winapi"
	"github.com/tickscope/tickscope/precise"
)

// These run only on Windows (the file's suffix), on the real kernel, and
// assert only what Windows guarantees (CONTRIBUTING.md: tests that only real Windows can pass).
// TestWine's "precise" subtest also runs them under Wine, where they show
// the plumbing.

// While Hold(1 ms) stands, the period in force is at most 1 ms: the
// kernel grants a period no coarser than the request, and the finest
// request of any process sets the interrupt rate.
func TestHoldKeepsTheCurrentPeriodAtMostTheRequest(t *testing.T) {
	_, finest, _, err := winapi.NtQueryTimerResolution()
	if err != nil {
		t.Fatal(err)
	}
	const period = time.Millisecond
	if time.Duration(finest)*100 > period {
		t.Skipf("this machine's finest timer period is %v, coarser than %v", time.Duration(finest)*100, period)
	}
	release, err := precise.Hold(period)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	_, _, current, err := winapi.NtQueryTimerResolution()
	if err != nil {
		t.Fatal(err)
	}
	if got := time.Duration(current) * 100; got > period {
		t.Errorf("Hold(%v) stands, yet the current period reads %v", period, got)
	}
}

// With a period held, Sleep still never ends before its delay on QPC: the
// native timer is woken a margin early and the rest is spun.
func TestSleepNeverReturnsEarlyWhileHolding(t *testing.T) {
	release, err := precise.Hold(time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	for _, d := range []time.Duration{100 * time.Microsecond, 700 * time.Microsecond, time.Millisecond, 1500 * time.Microsecond} {
		for range 20 {
			start := hrNow()
			precise.Sleep(d)
			if got := hrNow() - start; got < d {
				t.Fatalf("Sleep(%v) returned after %v", d, got)
			}
		}
	}
}
