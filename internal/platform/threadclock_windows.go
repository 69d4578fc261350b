package platform

import (
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sys/windows"

	"github.com/tickscope/tickscope/internal/winapi"
)

// ThreadCPU makes the Windows host a seam.ThreadClock: GetThreadTimes on a
// handle to the calling thread, opened for reading its times only. Windows
// charges CPU time to threads at clock interrupts, as it does the process's
// (GetProcessTimes), so the two are subtracted at the same granularity.
func (h *windowsHost) ThreadCPU() (read func() time.Duration, done func(), err error) {
	thread, err := windows.OpenThread(windows.THREAD_QUERY_LIMITED_INFORMATION, false, windows.GetCurrentThreadId())
	if err != nil {
		return nil, nil, fmt.Errorf("OpenThread: %w", err)
	}
	times := func() (time.Duration, error) {
		var creation, exit, kernel, user windows.Filetime
		err := winapi.GetThreadTimes(thread, &creation, &exit, &kernel, &user)
		ticks := func(f windows.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
		return time.Duration(ticks(kernel)+ticks(user)) * 100, err
	}
	first, err := times()
	if err != nil {
		windows.CloseHandle(thread)
		return nil, nil, fmt.Errorf("GetThreadTimes: %w", err)
	}
	// A failed read gives the last value read, so that the time never runs
	// backwards.
	var last atomic.Int64
	last.Store(int64(first))
	read = func() time.Duration {
		if t, err := times(); err == nil {
			last.Store(int64(t))
		}
		return time.Duration(last.Load())
	}
	return read, func() { windows.CloseHandle(thread) }, nil
}
