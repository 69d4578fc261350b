//go:build unix

package platform

import (
	"time"

	"golang.org/x/sys/unix"
)

// rusageCPU is the process's user and system time from getrusage.
func rusageCPU() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
