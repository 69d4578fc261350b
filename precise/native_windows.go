package precise

import (
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/windows"

	"github.com/tickscope/tickscope/internal/platform/winapi"
)

// spin_sleep's default accuracy on Windows with a high-resolution waitable
// timer: where the margin starts.
const (
	initialMargin = int64(700 * time.Microsecond)
	maxMargin     = int64(4 * time.Millisecond)
)

// now reads QueryPerformanceCounter in ns: Go's own clock on Windows moves
// with the timer interrupt, too coarsely to spin on.
func now() int64 { return winapi.QPCNanos() }

// fallback is taken once where high-resolution waitable timers do not
// exist (before Windows 10 1803): this process then holds a 1 ms period.
var fallback = sync.OnceValue(func() bool {
	t, err := winapi.CreateWaitableTimerEx(winapi.CREATE_WAITABLE_TIMER_HIGH_RESOLUTION, windows.TIMER_ALL_ACCESS)
	if err == nil {
		windows.CloseHandle(t)
		return false
	}
	windows.TimeBeginPeriod(1)
	return true
})

// nativeSleepUntil sleeps on a high-resolution waitable timer from this
// goroutine's OS thread, or with Sleep of whole milliseconds after
// timeBeginPeriod(1) where that timer does not exist.
func nativeSleepUntil(deadline int64) {
	remaining := deadline - now()
	if remaining <= 0 {
		return
	}
	if fallback() {
		windows.SleepEx(uint32(remaining/int64(time.Millisecond)), false)
		return
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t, err := winapi.CreateWaitableTimerEx(winapi.CREATE_WAITABLE_TIMER_HIGH_RESOLUTION, windows.TIMER_ALL_ACCESS)
	if err != nil {
		return // the spin covers the whole wait
	}
	defer windows.CloseHandle(t)
	if winapi.SetWaitableTimerEx(t, -(remaining/100), 0, 0) != nil {
		return
	}
	windows.WaitForSingleObject(t, windows.INFINITE)
}
