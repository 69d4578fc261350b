//go:build !linux && !windows

package nativewait

import "time"

// On this OS the native timer is Go's time.Sleep (on macOS the runtime's
// kevent timers), and the clock Go's monotonic clock (mach_absolute_time
// on macOS).
const (
	// InitialMargin is where precise's calibrated margin starts.
	InitialMargin = 1 * time.Millisecond
	// MaxMargin bounds precise's calibrated margin.
	MaxMargin = 4 * time.Millisecond
)

var clockBase = time.Now()

// Now reads Go's monotonic clock in ns.
func Now() int64 { return int64(time.Since(clockBase)) }

// BestSleepUntil sleeps until the deadline (ns on Now's clock) with Go's
// time.Sleep.
func BestSleepUntil(deadline int64) { time.Sleep(time.Duration(deadline - Now())) }
