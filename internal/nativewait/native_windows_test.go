package nativewait_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/nativewait"
	"github.com/tickscope/tickscope/internal/winapi"
)

// These run only on Windows (the file's suffix), on the real kernel, and
// assert only what Windows guarantees however loaded the machine is
// (CONTRIBUTING.md: tests that only real Windows can pass). Under Wine they show the plumbing
// only.

// qpcTick is one count of QueryPerformanceCounter in ns, rounded up: Now
// converts counts to ns with truncation, so two readings can each be up
// to a count behind the true time.
func qpcTick() int64 {
	f := winapi.QPCFrequency()
	return (1_000_000_000 + f - 1) / f
}

// A high-resolution waitable timer (CREATE_WAITABLE_TIMER_HIGH_RESOLUTION,
// Windows 10 1803+) set to a relative due time does not signal before that
// time has passed on QueryPerformanceCounter, the clock Windows derives
// its interrupt time from ("Acquiring high-resolution time stamps",
// Microsoft Learn). The tolerance is one QPC count of conversion, and for
// SleepUntil the 100 ns it truncates the due time to.
func TestHighResolutionTimerNeverEndsEarlyOnQPC(t *testing.T) {
	if !nativewait.HighResolutionTimers() {
		t.Skip("this Windows has no high-resolution waitable timers (before Windows 10 1803)")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	timer, err := nativewait.NewTimer(true)
	if err != nil {
		t.Fatal(err)
	}
	defer timer.Close()
	tick := qpcTick()
	for _, d := range []time.Duration{time.Microsecond, 100 * time.Microsecond, 500 * time.Microsecond, time.Millisecond, 1500 * time.Microsecond} {
		for range 20 {
			start := nativewait.Now()
			if err := timer.SleepFor(d); err != nil {
				t.Fatal(err)
			}
			if took := nativewait.Now() - start; took < int64(d)-tick {
				t.Fatalf("SleepFor(%v) ended after %d ns on QPC, %d ns early", d, took, int64(d)-took)
			}
			deadline := nativewait.Now() + int64(d)
			if err := timer.SleepUntil(deadline); err != nil {
				t.Fatal(err)
			}
			if early := deadline - nativewait.Now(); early > 100+tick {
				t.Fatalf("SleepUntil(%v from now) ended %d ns early on QPC", d, early)
			}
		}
	}
}

// QPC counts forward: two readings in a row never go back, at any
// frequency ("QueryPerformanceCounter", Microsoft Learn: monotonic across
// processors).
func TestQPCNeverGoesBack(t *testing.T) {
	last := nativewait.Now()
	for range 100000 {
		now := nativewait.Now()
		if now < last {
			t.Fatalf("QPC went back %d ns", last-now)
		}
		last = now
	}
}
