package platform

import (
	"golang.org/x/sys/unix"

	"github.com/tickscope/tickscope/internal/seam"
)

var _ seam.StopWatcher = (*linuxHost)(nil)

// WatchStops makes the Linux host a seam.StopWatcher: job-control stops
// through SIGCONT (continueWatch), suspends as CLOCK_BOOTTIME less
// CLOCK_MONOTONIC, which stops while the machine is suspended (both are
// read through the vDSO: no system call between waits). A process stopped
// by a debugger (ptrace), a frozen cgroup (docker pause) or a paused
// virtual machine receives no SIGCONT and moves neither clock apart: that
// is not told.
func (h *linuxHost) WatchStops() (seam.StopWatch, error) {
	return newContinueWatch(suspendedLinux), nil
}

func suspendedLinux() int64 {
	var boot, mono unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &boot) != nil || unix.ClockGettime(unix.CLOCK_MONOTONIC, &mono) != nil {
		return 0
	}
	return boot.Nano() - mono.Nano()
}
