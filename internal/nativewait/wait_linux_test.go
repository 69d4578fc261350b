package nativewait_test

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tickscope/tickscope/internal/nativewait"
)

// These use the real kernel and assert only what holds on any machine,
// however loaded.

// Now is calibrated to read at or after the kernel's CLOCK_MONOTONIC, so
// that a wait measured on it is never seen to end early.
func TestNowIsNeverBehindTheKernel(t *testing.T) {
	for range 1000 {
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			t.Fatal(err)
		}
		if now := nativewait.Now(); now < ts.Nano() {
			t.Fatalf("Now read %d, %d ns behind CLOCK_MONOTONIC read before it", now, ts.Nano()-now)
		}
	}
}

// clock_nanosleep on an absolute deadline never wakes before it, with the
// caller's slack or with the slack lowered; a deadline passed already is
// no error.
func TestSleepsNeverEndEarly(t *testing.T) {
	for _, d := range []time.Duration{-time.Second, 0, 50 * time.Microsecond, time.Millisecond} {
		deadline := nativewait.Now() + int64(d)
		if err := nativewait.SleepUntil(deadline); err != nil {
			t.Errorf("SleepUntil(%v from now): %v", d, err)
		}
		if now := nativewait.Now(); now < deadline {
			t.Errorf("SleepUntil(%v from now) ended %d ns early", d, deadline-now)
		}
		deadline = nativewait.Now() + int64(d)
		nativewait.BestSleepUntil(deadline)
		if now := nativewait.Now(); now < deadline {
			t.Errorf("BestSleepUntil(%v from now) ended %d ns early", d, deadline-now)
		}
	}
}

// BestSleepUntil lowers the thread's timer slack only for its wait.
func TestBestSleepUntilPutsTheSlackBack(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const slack = 123456
	previous, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil {
		t.Skipf("PR_GET_TIMERSLACK: %v", err)
	}
	defer unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(previous), 0, 0, 0)
	if err := unix.Prctl(unix.PR_SET_TIMERSLACK, slack, 0, 0, 0); err != nil {
		t.Skipf("PR_SET_TIMERSLACK: %v", err)
	}
	nativewait.BestSleepUntil(nativewait.Now() + int64(100*time.Microsecond))
	if got, _ := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0); got != slack {
		t.Errorf("slack %d after BestSleepUntil, want %d", got, slack)
	}
}
