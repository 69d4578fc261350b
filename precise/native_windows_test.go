package precise_test

import (
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/nativewait"
	"github.com/tickscope/tickscope/internal/winapi"
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

// precise.Hold and the tool's own holds (nativewait.RequestResolution)
// share the process's one request: a finer request made and released
// while Hold stands replaces Hold's in place and puts it back, so the
// period stays at most Hold's. Were each to make its own request, the
// release would withdraw the process's only one, Hold's included.
func TestHoldSharesTheProcessRequest(t *testing.T) {
	_, finest, _, err := winapi.NtQueryTimerResolution()
	if err != nil {
		t.Fatal(err)
	}
	const period = time.Millisecond
	if time.Duration(finest)*100 > period/2 {
		t.Skipf("this machine's finest timer period is %v, coarser than %v", time.Duration(finest)*100, period/2)
	}
	release, err := precise.Hold(period)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := release(); err != nil {
			t.Errorf("Hold's release: %v", err)
		}
	}()
	_, releaseFiner, err := nativewait.RequestResolution(uint32(period / 2 / 100))
	if err != nil {
		t.Fatal(err)
	}
	if err := releaseFiner(); err != nil {
		t.Fatalf("the finer request's release: %v", err)
	}
	_, _, current, err := winapi.NtQueryTimerResolution()
	if err != nil {
		t.Fatal(err)
	}
	if got := time.Duration(current) * 100; got > period {
		t.Errorf("Hold(%v) stands after a finer request came and went, yet the current period reads %v", period, got)
	}
}
