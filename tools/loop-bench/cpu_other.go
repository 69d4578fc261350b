//go:build !linux && !windows

package main

import (
	"time"

	"golang.org/x/sys/unix"
)

func cpuTime() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
