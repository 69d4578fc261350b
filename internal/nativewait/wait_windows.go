package nativewait

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sys/windows"

	"github.com/tickscope/tickscope/internal/winapi"
)

const (
	// SpinSleepMargin is spin_sleep's fixed margin on Windows with a
	// high-resolution waitable timer: its hybrid sleeps natively to this
	// long before a deadline, then spins.
	SpinSleepMargin = 700 * time.Microsecond
	// InitialMargin is where precise's calibrated margin starts: spin_sleep's
	// default accuracy here.
	InitialMargin = SpinSleepMargin
	// MaxMargin bounds precise's calibrated margin.
	MaxMargin = 4 * time.Millisecond
)

// Now reads QueryPerformanceCounter in ns. Go's own clock on Windows
// follows the interrupt time, which is quantised by the very tick being
// measured, too coarsely to spin on.
func Now() int64 { return winapi.QPCNanos() }

// Sleep calls kernel32 Sleep (SleepEx, not alertable, is the same call)
// for whole milliseconds: time.Sleep would use Go's high-resolution timers
// instead, and end off the tick being measured.
func Sleep(ms uint32) { windows.SleepEx(ms, false) }

// HighResolutionTimers reports whether this Windows has
// CREATE_WAITABLE_TIMER_HIGH_RESOLUTION (Windows 10 1803+), probed once the
// way the Go runtime probes at start-up: where it is missing, the runtime
// calls timeBeginPeriod(1) for itself, so every Go process holds a request.
func HighResolutionTimers() bool { return highResolutionTimers() }

var highResolutionTimers = sync.OnceValue(func() bool {
	timer, err := winapi.CreateWaitableTimerEx(nil, nil, winapi.CREATE_WAITABLE_TIMER_HIGH_RESOLUTION, windows.TIMER_ALL_ACCESS)
	if err != nil {
		return false
	}
	windows.CloseHandle(timer)
	return true
})

// Timer is a waitable timer, waited on by one goroutine at a time.
type Timer struct {
	handle windows.Handle
}

// NewTimer creates a waitable timer, high-resolution when asked
// (CREATE_WAITABLE_TIMER_HIGH_RESOLUTION).
func NewTimer(highResolution bool) (*Timer, error) {
	call, flags := "CreateWaitableTimerExW", uint32(0)
	if highResolution {
		call, flags = "CreateWaitableTimerExW(CREATE_WAITABLE_TIMER_HIGH_RESOLUTION)", winapi.CREATE_WAITABLE_TIMER_HIGH_RESOLUTION
	}
	handle, err := winapi.CreateWaitableTimerEx(nil, nil, flags, windows.TIMER_ALL_ACCESS)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", call, err)
	}
	return &Timer{handle: handle}, nil
}

// SleepFor waits d from now, rounded up to the timer's 100 ns units: a
// timer must not be asked to end before the delay.
func (t *Timer) SleepFor(d time.Duration) error {
	return t.wait(-int64((d + 99) / 100))
}

// SleepUntil waits until the deadline (ns on Now's clock), or not at all
// when it has passed.
func (t *Timer) SleepUntil(deadline int64) error {
	remaining := deadline - Now()
	if remaining <= 0 {
		return nil
	}
	return t.wait(-(remaining / 100))
}

// wait sets the timer to due (negative: relative, in 100 ns units) and
// waits for it.
func (t *Timer) wait(due int64) error {
	if err := winapi.SetWaitableTimerEx(t.handle, &due, 0, 0, nil, nil, 0); err != nil {
		return fmt.Errorf("SetWaitableTimerEx: %w", err)
	}
	if _, err := windows.WaitForSingleObject(t.handle, windows.INFINITE); err != nil {
		return fmt.Errorf("WaitForSingleObject: %w", err)
	}
	return nil
}

// Close releases the timer.
func (t *Timer) Close() error { return windows.CloseHandle(t.handle) }

// holdsFallbackPeriod is decided once, at the first BestSleepUntil: where
// high-resolution waitable timers do not exist (before Windows 10 1803)
// this process holds a 1 ms period from then on, so that Sleep ends within
// a millisecond.
var holdsFallbackPeriod = sync.OnceValue(func() bool {
	if HighResolutionTimers() {
		return false
	}
	// timeBeginPeriod is counted by winmm, so the runtime's own
	// timeEndPeriod(1) when it idles leaves this one in force.
	return winapi.TimeBeginPeriod(1) == nil
})

// idleTimers are high-resolution waitable timers not in use. A waitable
// timer belongs to the process, not to a thread, and any thread may wait
// on it; what must not happen is two waits sharing one. So a wait takes a
// timer from here and gives it back: there are never more timers than
// waits that were in progress at once (at most one per thread that
// waits), and none is created per wait ("CreateWaitableTimerExW
// function", "SetWaitableTimerEx function", Microsoft Learn). They live as
// long as the process.
var idleTimers struct {
	sync.Mutex
	free []*Timer
}

func takeTimer() (*Timer, error) {
	idleTimers.Lock()
	if n := len(idleTimers.free); n > 0 {
		t := idleTimers.free[n-1]
		idleTimers.free = idleTimers.free[:n-1]
		idleTimers.Unlock()
		return t, nil
	}
	idleTimers.Unlock()
	return NewTimer(true)
}

func giveTimer(t *Timer) {
	idleTimers.Lock()
	idleTimers.free = append(idleTimers.free, t)
	idleTimers.Unlock()
}

// BestSleepUntil sleeps until the deadline (ns on Now's clock) on the best
// native timer, from any goroutine: a high-resolution waitable timer (kept
// and reused, one per concurrent waiter), or Sleep of whole milliseconds
// after timeBeginPeriod(1) where that timer does not exist. A failed sleep
// returns early; the caller's spin covers the rest.
func BestSleepUntil(deadline int64) {
	remaining := deadline - Now()
	if remaining <= 0 {
		return
	}
	if holdsFallbackPeriod() || !HighResolutionTimers() {
		Sleep(uint32(remaining / int64(time.Millisecond)))
		return
	}
	t, err := takeTimer()
	if err != nil {
		return
	}
	if t.SleepUntil(deadline) != nil {
		// A timer that failed once is not trusted again.
		t.Close()
		return
	}
	giveTimer(t)
}

// RequestResolution holds a timer period of units (100 ns, more than 0)
// for this process and returns the period in force after it and the
// release of the hold. Since Windows 10 2004 the request affects this
// process only, unless GlobalTimerResolutionRequests is set.
//
// Windows keeps one NtSetTimerResolution request per process, so every
// caller in the process (the seam's Apply, precise.Hold) shares it: the
// finest period held is the one requested, replaced in place by the next
// finest when its hold is released, and withdrawn with the last. A release
// that fails says which call failed (a withdrawal answered with
// STATUS_TIMER_RESOLUTION_NOT_SET: something else in the process, another
// library calling NtSetTimerResolution or timeEndPeriod, withdrew it).
func RequestResolution(units uint32) (current uint32, release func() error, err error) {
	return processRequest.hold(units)
}

// processRequest is this process's one NtSetTimerResolution request.
var processRequest = &requestSet{
	request: setTimerResolution,
	query: func() uint32 {
		_, _, current, _ := winapi.NtQueryTimerResolution()
		return current
	},
}

// setTimerResolution replaces the process's request from (0: none) with to
// (0: withdraw it), and returns the period in force after it. A request of
// TRUE replaces the one in force ("NtSetTimerResolution", ntddk; one
// request per process), so only a withdrawal names from.
func setTimerResolution(from, to uint32) (uint32, error) {
	var current uint32
	if to != 0 {
		if err := winapi.NtSetTimerResolution(to, true, &current); err != nil {
			return 0, fmt.Errorf("NtSetTimerResolution(%d, TRUE): %w", to, err)
		}
		return current, nil
	}
	if err := winapi.NtSetTimerResolution(from, false, &current); err != nil {
		if errors.Is(err, winapi.STATUS_TIMER_RESOLUTION_NOT_SET) {
			return 0, fmt.Errorf("NtSetTimerResolution(%d, FALSE): the request had already been withdrawn by something else in this process: %w", from, err)
		}
		return 0, fmt.Errorf("NtSetTimerResolution(%d, FALSE): %w", from, err)
	}
	return current, nil
}
