package platform

import (
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// ThreadCPU makes the Linux host a seam.ThreadClock: it reads the calling
// thread's CPU-time clock, which any thread of the process can read with
// clock_gettime. The clock's id is the one pthread_getcpuclockid(3) gives
// (the kernel's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED) in
// include/linux/posix-timers.h: the complement of the thread id shifted
// left by 3, with CPUCLOCK_PERTHREAD_MASK 4 and CPUCLOCK_SCHED 2 set).
func (h *linuxHost) ThreadCPU() (read func() time.Duration, done func(), err error) {
	tid := unix.Gettid()
	clock := threadCPUClock(tid)
	var ts unix.Timespec
	if err := unix.ClockGettime(clock, &ts); err != nil {
		return nil, nil, fmt.Errorf("reading thread %d's CPU clock: %w", tid, err)
	}
	// A failed read (none is expected while the thread lives) gives the
	// last value read, so that the time never runs backwards.
	var last atomic.Int64
	last.Store(ts.Nano())
	read = func() time.Duration {
		var ts unix.Timespec
		if unix.ClockGettime(clock, &ts) == nil {
			last.Store(ts.Nano())
		}
		return time.Duration(last.Load())
	}
	return read, func() {}, nil
}

// threadCPUClock is the CPU-time clock of thread tid.
func threadCPUClock(tid int) int32 {
	const cpuclockSched, cpuclockPerthreadMask = 2, 4
	return (^int32(tid))<<3 | cpuclockPerthreadMask | cpuclockSched
}
