package precise

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tickscope/tickscope/internal/monoclock"
)

// spin_sleep's default accuracy on Linux: where the margin starts.
const (
	initialMargin = int64(125 * time.Microsecond)
	maxMargin     = int64(500 * time.Microsecond)
)

// now reads CLOCK_MONOTONIC, the clock clock_nanosleep's deadlines are on.
func now() int64 { return monoclock.Now() }

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
	ts := unix.NsecToTimespec(deadline)
	for unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil) == unix.EINTR {
	}
}
