package nativewait

import (
	"fmt"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

const (
	// SpinSleepMargin is spin_sleep's fixed margin on Linux: its hybrid
	// sleeps natively to this long before a deadline, then spins.
	SpinSleepMargin = 125 * time.Microsecond
	// InitialMargin is where precise's calibrated margin starts: spin_sleep's
	// default accuracy here.
	InitialMargin = SpinSleepMargin
	// MaxMargin bounds precise's calibrated margin.
	MaxMargin = 500 * time.Microsecond
)

// SleepUntil sleeps with clock_nanosleep on the absolute CLOCK_MONOTONIC
// deadline (ns on Now's clock), resuming after a signal. The calling
// thread's timer slack applies: the caller sets it (cyclictest's loop, as
// the seam's clock-abs method measures it) or BestSleepUntil does.
func SleepUntil(deadline int64) error {
	ts := unix.NsecToTimespec(deadline)
	for {
		err := unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil)
		if err == nil {
			return nil
		}
		if err != unix.EINTR {
			return fmt.Errorf("clock_nanosleep: %w", err)
		}
	}
}

// BestSleepUntil sleeps until the deadline on the best native timer, from
// any goroutine: SleepUntil on this goroutine's OS thread with the thread's
// timer slack at 1 ns for the wait and put back after. A failed sleep
// returns early; the caller's spin covers the rest.
func BestSleepUntil(deadline int64) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	previous, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err == nil && previous != 1 {
		unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
		defer unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(previous), 0, 0, 0)
	}
	SleepUntil(deadline)
}
