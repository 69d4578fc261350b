package platform

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/registry"

	"github.com/tickscope/tickscope/internal/nativewait"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/winapi"
)

// Registry locations tickscope reads besides timerinfo.GlobalRequestsKey
// (which only `global on|off` ever writes).
const (
	powerThrottlingPath  = `SYSTEM\CurrentControlSet\Control\Power\PowerThrottling`
	userPresenceQosValue = "DisableUserPresenceQos"
)

// Supported is nil: tickscope serves Windows.
func Supported() error { return nil }

// New returns the host tickscope runs on, with the extra portable methods
// among its own.
func New(extra ...PortableMethod) seam.Host { return &windowsHost{extra: extra} }

type windowsHost struct {
	extra []PortableMethod
	// requests counts this process's outstanding NtSetTimerResolution
	// requests, for Query's "holds a request".
	requests atomic.Int32
	// throttling is the opt-out's outcome once Apply has held a period.
	throttling atomic.Value
}

func (h *windowsHost) Methods() []seam.Method {
	return append([]seam.Method{
		{Name: "sleep", Summary: "kernel32 Sleep of whole milliseconds (ends on a timer tick)", WholeMilliseconds: true, Schedule: seam.Relative},
		{Name: "waitable", Summary: "a waitable timer (CreateWaitableTimerExW), relative due time", Schedule: seam.Relative},
		{Name: "waitable-hr", Summary: "a high-resolution waitable timer (CREATE_WAITABLE_TIMER_HIGH_RESOLUTION, Windows 10 1803+)", Schedule: seam.Relative},
		{Name: "timesetevent", Summary: "timeSetEvent periodic, whole ms, setting an event (multimedia timer)", WholeMilliseconds: true, Schedule: seam.Periodic, CatchesUp: true},
		{Name: "timerqueue", Summary: "CreateTimerQueueTimer periodic, whole ms, its callback setting an event", WholeMilliseconds: true, Schedule: seam.Periodic, CatchesUp: true},
		{Name: "hybrid", Summary: fmt.Sprintf("a high-resolution waitable timer to %d µs before each deadline, then spin (spin_sleep's fixed Windows margin; periodic)", nativewait.SpinSleepMargin/time.Microsecond), Schedule: seam.Periodic},
	}, portableMethods(h.extra)...)
}

// Now reads QueryPerformanceCounter. Go's own clock on Windows follows the
// interrupt time, which is quantised by the very tick being measured.
func (h *windowsHost) Now() int64 { return nativewait.Now() }

// PrepareThread raises the process to HIGH_PRIORITY_CLASS and the thread
// to TIME_CRITICAL. restore puts the process's class back; the thread ends
// with its measurement.
func (h *windowsHost) PrepareThread() (string, func()) {
	var parts []string
	restore := func() {}
	previous, getErr := windows.GetPriorityClass(windows.CurrentProcess())
	if err := windows.SetPriorityClass(windows.CurrentProcess(), windows.HIGH_PRIORITY_CLASS); err == nil {
		parts = append(parts, "process HIGH_PRIORITY_CLASS")
		if getErr == nil {
			restore = func() { windows.SetPriorityClass(windows.CurrentProcess(), previous) }
		}
	} else {
		parts = append(parts, "process class unchanged ("+err.Error()+")")
	}
	if err := winapi.SetThreadPriority(windows.CurrentThread(), winapi.THREAD_PRIORITY_TIME_CRITICAL); err == nil {
		parts = append(parts, "thread TIME_CRITICAL")
	} else {
		parts = append(parts, "thread priority unchanged ("+err.Error()+")")
	}
	return strings.Join(parts, ", "), restore
}

var _ seam.ThreadEnder = (*windowsHost)(nil)

// mainThreadID is the process's first thread: Go initialises package
// variables on it.
var mainThreadID = windows.GetCurrentThreadId()

// threadEndBoundMs bounds ThreadEnding's wait: a thread ends within
// milliseconds of its goroutine, and a wait that outlived a change in Go's
// runtime must not hold the command up.
const threadEndBoundMs = 1000

// ThreadEnding makes Host a seam.ThreadEnder: its wait returns once the
// calling thread has ended, which is when its handle is signalled ("Thread
// Handles and Identifiers", Microsoft Learn; Wine signals it once the
// thread's Unix side has left it, before which ExitProcess would stop that
// thread mid-exit). Go ends the thread of a goroutine that exits locked,
// except the main thread, which it parks: there is nothing to wait for then.
func (h *windowsHost) ThreadEnding() func() {
	id := windows.GetCurrentThreadId()
	if id == mainThreadID {
		return func() {}
	}
	thread, err := windows.OpenThread(windows.SYNCHRONIZE, false, id)
	if err != nil {
		return func() {}
	}
	return func() {
		windows.WaitForSingleObject(thread, threadEndBoundMs)
		windows.CloseHandle(thread)
	}
}

func (h *windowsHost) Apply(s timerinfo.Setting) (timerinfo.Setting, func() error, error) {
	noop := func() error { return nil }
	if s.SlackNs != 0 || s.CPUDMALatencyUs != nil {
		return timerinfo.Setting{}, noop, fmt.Errorf("a Linux setting: %w", seam.ErrUnsupported)
	}
	if s.IsZero() {
		return timerinfo.Setting{}, noop, nil
	}
	// Every path that holds a period (bench, measure, compare, curve,
	// status, run, apply) opts the process out of Windows 11's throttling
	// first: a console minimised during a bench would otherwise have its
	// request ignored ("SetProcessInformation function",
	// PROCESS_POWER_THROTTLING_IGNORE_TIMER_RESOLUTION, Microsoft Learn).
	h.throttling.Store(throttlingOptOut())
	_, _, before, _ := winapi.NtQueryTimerResolution()
	granted, release, err := h.apply(s)
	if err != nil {
		return granted, release, err
	}
	return granted, func() error {
		err := release()
		settle(before)
		return err
	}, nil
}

// settle waits, after a request is withdrawn, until the current period is
// back to what it was before the request (at most two default ticks,
// polling each 0.5 ms). Whether the kernel applies the coarser period at
// once or only at a later clock interrupt is not documented; the bench
// holds each chunk to the period read before and after it (Dawson's rule),
// so a reading taken in that interval would discard every chunk on a quiet
// machine. A period that does not come back within the bound was changed by
// another process, and the measurement records that.
func settle(before uint32) {
	deadline := time.Now().Add(2 * 15625 * time.Microsecond)
	for {
		_, _, current, err := winapi.NtQueryTimerResolution()
		if err != nil || current == before || time.Now().After(deadline) {
			return
		}
		time.Sleep(500 * time.Microsecond)
	}
}

// apply makes the request of Apply.
func (h *windowsHost) apply(s timerinfo.Setting) (timerinfo.Setting, func() error, error) {
	noop := func() error { return nil }
	if ms := s.TimeBeginPeriodMs; ms != 0 {
		return h.holdWholeMilliseconds(ms, timerinfo.Setting{TimeBeginPeriodMs: ms})
	}
	// Without high-resolution waitable timers the Go runtime's own
	// timeEndPeriod(1) would withdraw an NtSetTimerResolution request:
	// whole milliseconds go through timeBeginPeriod there, finer periods
	// are refused with the reason.
	ms, err := timerinfo.WholeMillisecondHold(nativewait.HighResolutionTimers(), s.Resolution100ns)
	if err != nil {
		return timerinfo.Setting{}, noop, err
	}
	if ms != 0 {
		granted, release, err := h.holdWholeMilliseconds(ms, timerinfo.Setting{})
		if err == nil {
			_, _, current, _ := winapi.NtQueryTimerResolution()
			granted = timerinfo.Setting{Resolution100ns: current}
		}
		return granted, release, err
	}
	current, withdraw, err := nativewait.RequestResolution(s.Resolution100ns)
	if err != nil {
		return timerinfo.Setting{}, noop, err
	}
	h.requests.Add(1)
	release := func() error {
		defer h.requests.Add(-1)
		return withdraw()
	}
	return timerinfo.Setting{Resolution100ns: current}, release, nil
}

// holdWholeMilliseconds requests ms with timeBeginPeriod, whose MMRESULT
// names a failure, and returns granted with its release.
func (h *windowsHost) holdWholeMilliseconds(ms uint32, granted timerinfo.Setting) (timerinfo.Setting, func() error, error) {
	if err := winapi.TimeBeginPeriod(ms); err != nil {
		return timerinfo.Setting{}, func() error { return nil }, &seam.OSError{Call: fmt.Sprintf("timeBeginPeriod(%d)", ms), Err: err}
	}
	h.requests.Add(1)
	release := func() error {
		h.requests.Add(-1)
		if err := winapi.TimeEndPeriod(ms); err != nil {
			return &seam.OSError{Call: fmt.Sprintf("timeEndPeriod(%d)", ms), Err: err}
		}
		return nil
	}
	return granted, release, nil
}

// throttlingOptOut opts the process out of Windows 11's timer-resolution
// throttling once: the setting is the process's, and lasts. Its outcome is
// what Observe reports.
var throttlingOptOut = sync.OnceValue(func() string {
	return timerinfo.ThrottlingOutcome(winapi.IgnoreTimerResolutionThrottling())
})

// Observe reads the period in force, and the outcome of the opt-out Apply
// made before it held a period ("" when it has held none).
func (h *windowsHost) Observe() seam.Observation {
	_, _, current, _ := winapi.NtQueryTimerResolution()
	throttling, _ := h.throttling.Load().(string)
	return seam.Observation{Current100ns: current, TimerThrottling: throttling}
}

func (h *windowsHost) NewWaiter(method string, delay time.Duration) (seam.Waiter, error) {
	switch method {
	case "sleep":
		return sleepWaiter{ms: uint32(delay / time.Millisecond)}, nil
	case "waitable":
		return newWaitableWaiter(false, delay)
	case "waitable-hr":
		return newWaitableWaiter(true, delay)
	case "timesetevent", "timerqueue":
		return newEventTimerWaiter(method, uint32(delay/time.Millisecond))
	case "hybrid":
		timer, err := nativewait.NewTimer(true)
		if err != nil {
			return nil, err
		}
		return hybridWaiter{sleepUntil: timer.SleepUntil, close: timer.Close, now: h.Now, margin: int64(nativewait.SpinSleepMargin)}, nil
	}
	if w := newPortableWaiter(method, delay, h.Now, h.extra); w != nil {
		return w, nil
	}
	return nil, fmt.Errorf("unknown method %q", method)
}

// sleepWaiter calls kernel32 Sleep through the system call.
type sleepWaiter struct{ ms uint32 }

func (w sleepWaiter) Wait(int64) error { nativewait.Sleep(w.ms); return nil }
func (sleepWaiter) Close() error       { return nil }

// waitableWaiter waits its delay, relative, on a waitable timer of its own.
type waitableWaiter struct {
	timer *nativewait.Timer
	delay time.Duration
}

func newWaitableWaiter(highResolution bool, delay time.Duration) (*waitableWaiter, error) {
	timer, err := nativewait.NewTimer(highResolution)
	if err != nil {
		return nil, err
	}
	return &waitableWaiter{timer: timer, delay: delay}, nil
}

func (w *waitableWaiter) Wait(int64) error { return w.timer.SleepFor(w.delay) }
func (w *waitableWaiter) Close() error     { return w.timer.Close() }

func (h *windowsHost) Query() (*timerinfo.Report, error) {
	coarsest, finest, current, err := winapi.NtQueryTimerResolution()
	if err != nil {
		return nil, &seam.OSError{Call: "NtQueryTimerResolution", Err: err}
	}
	v := windows.RtlGetVersion()
	highRes := nativewait.HighResolutionTimers()
	win := &timerinfo.Windows{
		Coarsest100ns:                 coarsest,
		Finest100ns:                   finest,
		Current100ns:                  current,
		ProcessHoldsRequest:           h.requests.Load() > 0 || !highRes,
		Version:                       fmt.Sprintf("%d.%d.%d", v.MajorVersion, v.MinorVersion, v.BuildNumber),
		Build:                         v.BuildNumber,
		Server:                        v.ProductType != 1, // VER_NT_WORKSTATION
		Product:                       timerinfo.WindowsProduct(v.MajorVersion, v.MinorVersion, v.BuildNumber, v.ProductType != 1),
		GlobalTimerResolutionRequests: readDWORD(timerinfo.KernelKeyPath, timerinfo.GlobalRequestsValue),
		KernelKeyWrittenAfterBoot:     kernelKeyWrittenAfterBoot(),
		NoHighResolutionTimers:        !highRes,
		Elevated:                      windows.GetCurrentProcessToken().IsElevated(),
		DisableUserPresenceQos:        readDWORD(powerThrottlingPath, userPresenceQosValue),
		QPCFrequencyHz:                winapi.QPCFrequency(),
	}
	win.RequestModel = timerinfo.RunningRequestModel(win.Build, win.GlobalTimerResolutionRequests, win.KernelKeyWrittenAfterBoot)
	if win.Elevated {
		boot, err := bootTimerSettings()
		if err != nil {
			reason := "unknown (bcdedit failed: " + err.Error() + ")"
			win.DynamicTickDisabled, win.PlatformTick, win.PlatformClock = reason, reason, reason
		} else {
			win.DynamicTickDisabled, win.PlatformTick, win.PlatformClock = boot.DisableDynamicTick, boot.UsePlatformTick, boot.UsePlatformClock
		}
	} else {
		const reason = "unknown (needs elevation)"
		win.DynamicTickDisabled, win.PlatformTick, win.PlatformClock = reason, reason, reason
	}
	rep := &timerinfo.Report{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), Windows: win, Warnings: []string{}}
	if current < coarsest && !win.ProcessHoldsRequest {
		rep.Warnings = append(rep.Warnings, timerinfo.HeldWarning(current, coarsest))
	}
	if warning := win.PendingRebootWarning(); warning != "" {
		rep.Warnings = append(rep.Warnings, warning)
	}
	if !highRes {
		rep.Warnings = append(rep.Warnings, timerinfo.NoHighResolutionTimersWarning)
	}
	if win.DynamicTickDisabled == "yes" {
		rep.Warnings = append(rep.Warnings, "disabledynamictick is set, a debugging switch; to revert it run `bcdedit /deletevalue disabledynamictick` elevated and reboot")
	}
	return rep, nil
}

// readDWORD reads a REG_DWORD under HKLM, or nil when it is absent or
// unreadable.
func readDWORD(path, name string) *uint32 {
	k, err := registry.OpenKey(registry.LOCAL_MACHINE, path, registry.QUERY_VALUE)
	if err != nil {
		return nil
	}
	defer k.Close()
	v, _, err := k.GetIntegerValue(name)
	if err != nil {
		return nil
	}
	d := uint32(v)
	return &d
}

// kernelKeyWrittenAfterBoot compares the kernel key's last write time
// (RegQueryInfoKey's lpftLastWriteTime, "RegQueryInfoKeyW function",
// Microsoft Learn) with the boot time, now less the time since boot
// (x/sys's DurationSinceBoot: GetTickCount64). The time
// is the key's, not the value's: any value written under the key after
// boot counts, so the answer errs towards "not yet in force", and points
// to verify-global, which measures. An unreadable key counts as not
// written.
func kernelKeyWrittenAfterBoot() bool {
	k, err := registry.OpenKey(registry.LOCAL_MACHINE, timerinfo.KernelKeyPath, registry.QUERY_VALUE)
	if err != nil {
		return false
	}
	defer k.Close()
	info, err := k.Stat()
	if err != nil {
		return false
	}
	uptime := windows.DurationSinceBoot()
	return timerinfo.WrittenAfterBoot(info.ModTime(), time.Now(), uptime)
}

// bootTimerSettings is readBootTimerSettings until it first succeeds, then
// its result: bcdedit is a process of its own, and a holder or watch that
// queries every few seconds must not start one each time (the boot
// settings it reads take effect at the next boot anyway); a failure is
// tried again at the next query instead of kept.
var bootTimerSettings = onceOK(readBootTimerSettings)

// readBootTimerSettings runs `bcdedit /enum {current}`, which reads the boot
// configuration and needs elevation. It never writes.
func readBootTimerSettings() (timerinfo.BootTimerSettings, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bcdedit", "/enum", "{current}")
	cmd.SysProcAttr = &syscall.SysProcAttr{HideWindow: true, CreationFlags: windows.CREATE_NO_WINDOW}
	// The exit status says whether it worked; the output's labels are in
	// the UI language, so only {current} is looked for in it.
	out, err := cmd.Output()
	if err != nil {
		return timerinfo.BootTimerSettings{}, err
	}
	if err := timerinfo.CheckBCDEditOutput(string(out)); err != nil {
		return timerinfo.BootTimerSettings{}, err
	}
	return timerinfo.ParseBCDEdit(string(out)), nil
}

// CPUTime is the process's kernel and user time from GetProcessTimes.
func (h *windowsHost) CPUTime() time.Duration {
	var creation, exit, kernel, user windows.Filetime
	if windows.GetProcessTimes(windows.CurrentProcess(), &creation, &exit, &kernel, &user) != nil {
		return 0
	}
	ticks := func(f windows.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return time.Duration(ticks(kernel)+ticks(user)) * 100
}

// eventTimerWaiter waits on an auto-reset event that a periodic timer sets:
// timeSetEvent sets it itself (TIME_CALLBACK_EVENT_SET); a timer-queue
// timer's callback calls SetEvent, one of the few calls a timer callback
// may make. The timer starts at the first wait.
type eventTimerWaiter struct {
	method string
	ms     uint32
	event  windows.Handle
	stop   func()
}

func newEventTimerWaiter(method string, ms uint32) (*eventTimerWaiter, error) {
	event, err := windows.CreateEvent(nil, 0, 0, nil)
	if err != nil {
		return nil, &seam.OSError{Call: "CreateEventW", Err: err}
	}
	return &eventTimerWaiter{method: method, ms: ms, event: event}, nil
}

// setEventCallback is the one WAITORTIMERCALLBACK: windows.NewCallback
// slots are few and never freed, so it is made once.
var setEventCallback = windows.NewCallback(func(parameter, fired uintptr) uintptr {
	windows.SetEvent(windows.Handle(parameter))
	return 0
})

func (w *eventTimerWaiter) Wait(int64) error {
	if w.stop == nil {
		switch w.method {
		case "timesetevent":
			// TIME_KILL_SYNCHRONOUS: no event is set after timeKillEvent
			// returns, so Close may close the event right after.
			id, err := winapi.TimeSetEvent(w.ms, 0, w.event, winapi.TIME_PERIODIC|winapi.TIME_CALLBACK_EVENT_SET|winapi.TIME_KILL_SYNCHRONOUS)
			if err != nil {
				return &seam.OSError{Call: fmt.Sprintf("timeSetEvent(%d)", w.ms), Err: err}
			}
			w.stop = func() { winapi.TimeKillEvent(id) }
		default:
			var timer windows.Handle
			if err := winapi.CreateTimerQueueTimer(&timer, 0, setEventCallback, uintptr(w.event), w.ms, w.ms, winapi.WT_EXECUTEINTIMERTHREAD); err != nil {
				return &seam.OSError{Call: fmt.Sprintf("CreateTimerQueueTimer(%d)", w.ms), Err: err}
			}
			w.stop = func() { winapi.DeleteTimerQueueTimer(0, timer, windows.InvalidHandle) }
		}
	}
	if _, err := windows.WaitForSingleObject(w.event, windows.INFINITE); err != nil {
		return &seam.OSError{Call: "WaitForSingleObject", Err: err}
	}
	return nil
}

func (w *eventTimerWaiter) Close() error {
	if w.stop != nil {
		w.stop()
	}
	return windows.CloseHandle(w.event)
}

var _ seam.InterruptClock = (*windowsHost)(nil)

// PollInterruptTime reads QueryUnbiasedInterruptTime in a tight loop for d
// (timed with QueryPerformanceCounter), on a thread of its own at the
// priority measurements run at, keeping only the changes: 100 ms is
// millions of reads.
//
// The thread is raised to THREAD_PRIORITY_TIME_CRITICAL, a priority that
// stays with the thread, not the goroutine ("SetThreadPriority function",
// "GetThreadPriority function", Microsoft Learn). So the poll puts the
// thread's priority back, and runs on a goroutine that ends locked to its
// thread, which Go then ends rather than hand back to its pool
// (runtime.LockOSThread; Go parks the main thread instead, never to run
// again); the call returns once that thread is gone. No goroutine ever
// runs on a time-critical thread the poll left behind, even if putting the
// priority back failed.
func (h *windowsHost) PollInterruptTime(d time.Duration) (string, int, []uint64, error) {
	type polled struct {
		reads  int
		values []uint64
		err    error
		ended  func()
	}
	done := make(chan polled, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		p := polled{ended: h.ThreadEnding()}
		previous, getErr := winapi.GetThreadPriority(windows.CurrentThread())
		_, restore := h.PrepareThread()
		p.reads, p.values, p.err = pollInterruptTime(d)
		restore()
		if getErr == nil {
			winapi.SetThreadPriority(windows.CurrentThread(), previous)
		}
		done <- p
	}()
	p := <-done
	p.ended()
	if p.err != nil {
		return "", 0, nil, p.err
	}
	return fmt.Sprintf("QueryUnbiasedInterruptTime read in a loop for %v", d), p.reads, p.values, nil
}

// pollInterruptTime is PollInterruptTime's loop.
func pollInterruptTime(d time.Duration) (reads int, values []uint64, err error) {
	for end := nativewait.Now() + int64(d); nativewait.Now() < end; {
		var t uint64
		if err := winapi.QueryUnbiasedInterruptTime(&t); err != nil {
			return 0, nil, &seam.OSError{Call: "QueryUnbiasedInterruptTime", Err: err}
		}
		if reads++; len(values) == 0 || t != values[len(values)-1] {
			values = append(values, t)
		}
	}
	return reads, values, nil
}
