package main

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

func methods() []method {
	m := commonMethods()
	// clock_nanosleep alone, and with spin_sleep's fixed 125 µs margin, both
	// on a locked thread with 1 ns of timer slack.
	return append(m[:2], append([]method{
		{"clock_nanosleep", func(period time.Duration, ticks int) []time.Duration { return native(period, ticks, 0) }},
		{"hybrid, 125µs margin", func(period time.Duration, ticks int) []time.Duration {
			return native(period, ticks, 125*time.Microsecond)
		}},
	}, m[2:]...)...)
}

var base = time.Now()

func native(period time.Duration, ticks int, margin time.Duration) []time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	previous, _ := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	defer unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(previous), 0, 0, 0)
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	offset := ts.Nano() - int64(time.Since(base))
	late := make([]time.Duration, 0, ticks)
	next := time.Since(base)
	for range ticks {
		next += period
		wake := unix.NsecToTimespec(int64(next-margin) + offset)
		for unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &wake, nil) == unix.EINTR {
		}
		for margin > 0 && time.Since(base) < next {
		}
		late = append(late, time.Since(base)-next)
	}
	return late
}
