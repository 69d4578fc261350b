package platform

import (
	"golang.org/x/sys/unix"

	"github.com/tickscope/tickscope/internal/seam"
)

var _ seam.StopWatcher = darwinHost{}

// WatchStops makes the macOS host a seam.StopWatcher: job-control stops
// through SIGCONT (continueWatch), suspends as CLOCK_MONOTONIC_RAW less
// CLOCK_UPTIME_RAW, of which only the first goes on while the machine
// sleeps. A stop by a debugger is not told.
func (h darwinHost) WatchStops() (seam.StopWatch, error) {
	return newContinueWatch(suspendedDarwin), nil
}

func suspendedDarwin() int64 {
	var mono, up unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC_RAW, &mono) != nil || unix.ClockGettime(unix.CLOCK_UPTIME_RAW, &up) != nil {
		return 0
	}
	return mono.Nano() - up.Nano()
}
