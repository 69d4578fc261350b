package nativewait

import (
	"time"

	"golang.org/x/sys/unix"
)

// Go's monotonic clock on Linux is CLOCK_MONOTONIC read through the vDSO,
// where x/sys's ClockGettime is a full system call; clockOffset aligns
// Go's origin with the kernel's.
var (
	clockBase   = time.Now()
	clockOffset = calibrateClock()
)

// calibrateClock brackets one ClockGettime between two reads of Go's clock
// and keeps the tightest bracket. The kernel's reading was taken somewhere
// inside it; aligning it with the bracket's start makes Now read at or
// after the true CLOCK_MONOTONIC, by at most the bracket's width (tens of
// ns). A sample can then be late by that much too, but never early, so "a
// wait never returns before its deadline" stays checkable.
func calibrateClock() int64 {
	var best int64
	bestWidth := int64(1 << 62)
	for range 32 {
		var ts unix.Timespec
		before := time.Since(clockBase)
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			continue
		}
		after := time.Since(clockBase)
		if width := int64(after - before); width < bestWidth {
			bestWidth = width
			best = ts.Nano() - int64(before)
		}
	}
	return best
}

// Now reads CLOCK_MONOTONIC in ns, the clock of SleepUntil's deadlines.
func Now() int64 { return clockOffset + int64(time.Since(clockBase)) }
