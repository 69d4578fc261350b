//go:build !linux && !windows

package precise

import "time"

// On this OS the native timer is Go's time.Sleep (on macOS the runtime's
// kevent timers), and the clock Go's monotonic clock.
const (
	initialMargin = int64(1 * time.Millisecond)
	maxMargin     = int64(4 * time.Millisecond)
)

var clockBase = time.Now()

func now() int64 { return int64(time.Since(clockBase)) }

func nativeSleepUntil(deadline int64) { time.Sleep(time.Duration(deadline - now())) }
