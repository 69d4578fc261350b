package precise

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// spin_sleep's default accuracy on Linux: where the margin starts.
const (
	initialMargin = int64(125 * time.Microsecond)
	maxMargin     = int64(500 * time.Microsecond)
)

var clockBase = time.Now()

// now reads CLOCK_MONOTONIC through Go's monotonic clock (the vDSO), in ns
// since clockBase.
func now() int64 { return int64(time.Since(clockBase)) }

// monoOffset converts now's clock to CLOCK_MONOTONIC for clock_nanosleep.
var monoOffset = func() int64 {
	var ts unix.Timespec
	before := now()
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	// Align with the bracket's start: the native sleep may then end a few
	// ns early on now's clock, which the spin absorbs.
	return ts.Nano() - before
}()

// nativeSleepUntil sleeps with clock_nanosleep on an absolute deadline from
// this goroutine's OS thread, with the thread's timer slack at 1 ns for the
// wait and put back after.
func nativeSleepUntil(deadline int64) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	previous, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err == nil && previous != 1 {
		unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
		defer unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(previous), 0, 0, 0)
	}
	ts := unix.NsecToTimespec(deadline + monoOffset)
	for unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil) == unix.EINTR {
	}
}
