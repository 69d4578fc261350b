package winapi

import (
	"fmt"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

var (
	ntdll    = windows.NewLazySystemDLL("ntdll.dll")
	kernel32 = windows.NewLazySystemDLL("kernel32.dll")
	winmm    = windows.NewLazySystemDLL("winmm.dll")

	procNtQueryTimerResolution     = ntdll.NewProc("NtQueryTimerResolution")
	procNtSetTimerResolution       = ntdll.NewProc("NtSetTimerResolution")
	procQueryPerformanceCounter    = kernel32.NewProc("QueryPerformanceCounter")
	procQueryPerformanceFrequency  = kernel32.NewProc("QueryPerformanceFrequency")
	procQueryUnbiasedInterruptTime = kernel32.NewProc("QueryUnbiasedInterruptTime")
	procCreateWaitableTimerExW     = kernel32.NewProc("CreateWaitableTimerExW")
	procSetWaitableTimerEx         = kernel32.NewProc("SetWaitableTimerEx")
	procSetThreadPriority          = kernel32.NewProc("SetThreadPriority")
	procGetThreadPriority          = kernel32.NewProc("GetThreadPriority")
	procGetThreadTimes             = kernel32.NewProc("GetThreadTimes")
	procIsProcessInJob             = kernel32.NewProc("IsProcessInJob")
	procSetProcessInformation      = kernel32.NewProc("SetProcessInformation")
	procCreateTimerQueueTimer      = kernel32.NewProc("CreateTimerQueueTimer")
	procDeleteTimerQueueTimer      = kernel32.NewProc("DeleteTimerQueueTimer")
	procTimeSetEvent               = winmm.NewProc("timeSetEvent")
	procTimeKillEvent              = winmm.NewProc("timeKillEvent")
	procTimeBeginPeriod            = winmm.NewProc("timeBeginPeriod")
	procTimeEndPeriod              = winmm.NewProc("timeEndPeriod")
)

// Constants, with their documented names.
const (
	// CREATE_WAITABLE_TIMER_MANUAL_RESET and CREATE_WAITABLE_TIMER_HIGH_RESOLUTION
	// are CreateWaitableTimerExW flags (synchapi.h; the second since Windows 10 1803).
	CREATE_WAITABLE_TIMER_MANUAL_RESET    = 0x1
	CREATE_WAITABLE_TIMER_HIGH_RESOLUTION = 0x2
	// THREAD_PRIORITY_TIME_CRITICAL is SetThreadPriority's highest level
	// (processthreadsapi.h).
	THREAD_PRIORITY_TIME_CRITICAL = 15
	// THREAD_PRIORITY_ERROR_RETURN is GetThreadPriority's failure
	// (MAXLONG, winbase.h).
	THREAD_PRIORITY_ERROR_RETURN = 0x7fffffff
	// STATUS_TIMER_RESOLUTION_NOT_SET is NtSetTimerResolution's answer to a
	// release without a request (ntstatus.h).
	STATUS_TIMER_RESOLUTION_NOT_SET windows.NTStatus = 0xC0000245
	// ProcessPowerThrottling is a PROCESS_INFORMATION_CLASS value, and the
	// PROCESS_POWER_THROTTLING_* values its state uses (processthreadsapi.h).
	ProcessPowerThrottling                           = 4
	PROCESS_POWER_THROTTLING_CURRENT_VERSION         = 1
	PROCESS_POWER_THROTTLING_IGNORE_TIMER_RESOLUTION = 0x4
	// timeSetEvent flags (timeapi.h): fire every uDelay ms, and set the
	// event handle passed as lpTimeProc instead of calling a function.
	TIME_PERIODIC           = 0x1
	TIME_CALLBACK_EVENT_SET = 0x10
	// TIME_KILL_SYNCHRONOUS keeps the event from occurring after
	// timeKillEvent returns ("timeSetEvent function", Microsoft Learn), so
	// that the event handle can be closed right after: without it the timer
	// thread may still set a closed, or reused, handle.
	TIME_KILL_SYNCHRONOUS = 0x100
	// WT_EXECUTEINTIMERTHREAD runs a timer-queue callback on the timer
	// thread itself (threadpoollegacyapiset.h).
	WT_EXECUTEINTIMERTHREAD = 0x20
)

// ProcessPowerThrottlingState is PROCESS_POWER_THROTTLING_STATE.
type ProcessPowerThrottlingState struct {
	Version     uint32
	ControlMask uint32
	StateMask   uint32
}

// NtQueryTimerResolution reports the timer periods in 100 ns units.
//
//	NTSTATUS NtQueryTimerResolution(PULONG MaximumResolution,
//	    PULONG MinimumResolution, PULONG CurrentResolution);
//
// Undocumented by Microsoft (microsoft/Windows-Dev-Performance#115); the
// signature is ntdll's as used by every timer tool. "Maximum resolution" is
// the coarsest period and "minimum resolution" the finest, so the outputs
// are named here for what they hold.
func NtQueryTimerResolution() (coarsest, finest, current uint32, err error) {
	r, _, _ := procNtQueryTimerResolution.Call(
		uintptr(unsafe.Pointer(&coarsest)),
		uintptr(unsafe.Pointer(&finest)),
		uintptr(unsafe.Pointer(&current)))
	if status := windows.NTStatus(r); status != windows.STATUS_SUCCESS {
		return 0, 0, 0, status
	}
	return coarsest, finest, current, nil
}

// NtSetTimerResolution requests (set true) or withdraws (set false) this
// process's timer period, in 100 ns units, and returns the period in force
// afterwards, which is what the kernel granted.
//
//	NTSTATUS NtSetTimerResolution(ULONG DesiredResolution,
//	    BOOLEAN SetResolution, PULONG CurrentResolution);
//
// Undocumented by Microsoft, as NtQueryTimerResolution.
func NtSetTimerResolution(desired uint32, set bool, current *uint32) windows.NTStatus {
	var setArg uintptr
	if set {
		setArg = 1
	}
	r, _, _ := procNtSetTimerResolution.Call(uintptr(desired), setArg, uintptr(unsafe.Pointer(current)))
	return windows.NTStatus(r)
}

// QueryPerformanceCounter reads the performance counter.
//
//	BOOL QueryPerformanceCounter(LARGE_INTEGER *lpPerformanceCount);
//
// Documented in profileapi.h; it cannot fail on Windows XP and later.
func QueryPerformanceCounter(counter *int64) {
	procQueryPerformanceCounter.Call(uintptr(unsafe.Pointer(counter)))
}

// QueryUnbiasedInterruptTime reads the unbiased interrupt-time count in
// 100 ns units, which "is incremented at each clock interrupt by the length
// of a clock tick" (and excludes sleep and hibernation).
//
//	BOOL QueryUnbiasedInterruptTime(PULONGLONG UnbiasedTime);
//
// Documented in realtimeapiset.h ("QueryUnbiasedInterruptTime function",
// Microsoft Learn; kernel32.dll, Windows 7 and later). It fails only when
// given a null pointer. x/sys does not bind it.
func QueryUnbiasedInterruptTime() (uint64, error) {
	var t uint64
	r, _, err := procQueryUnbiasedInterruptTime.Call(uintptr(unsafe.Pointer(&t)))
	if r == 0 {
		return 0, err
	}
	return t, nil
}

// QueryPerformanceFrequency reads the performance counter's frequency.
//
//	BOOL QueryPerformanceFrequency(LARGE_INTEGER *lpFrequency);
//
// Documented in profileapi.h.
func QueryPerformanceFrequency() (int64, error) {
	var freq int64
	r, _, err := procQueryPerformanceFrequency.Call(uintptr(unsafe.Pointer(&freq)))
	if r == 0 {
		return 0, err
	}
	if freq <= 0 {
		// Documented never to happen on Windows XP and later, but a zero
		// frequency would divide by zero, so it is an error of its own.
		return 0, fmt.Errorf("QueryPerformanceFrequency returned success with frequency %d", freq)
	}
	return freq, nil
}

// CreateWaitableTimerEx creates an unnamed waitable timer.
//
//	HANDLE CreateWaitableTimerExW(LPSECURITY_ATTRIBUTES lpTimerAttributes,
//	    LPCWSTR lpTimerName, DWORD dwFlags, DWORD dwDesiredAccess);
//
// Documented in synchapi.h (Windows Vista and later).
func CreateWaitableTimerEx(flags, access uint32) (windows.Handle, error) {
	r, _, err := procCreateWaitableTimerExW.Call(0, 0, uintptr(flags), uintptr(access))
	if r == 0 {
		return 0, err
	}
	return windows.Handle(r), nil
}

// SetWaitableTimerEx arms a waitable timer. A negative dueTime is relative,
// in 100 ns units; period 0 makes it fire once.
//
//	BOOL SetWaitableTimerEx(HANDLE hTimer, const LARGE_INTEGER *lpDueTime,
//	    LONG lPeriod, PTIMERAPCROUTINE pfnCompletionRoutine,
//	    LPVOID lpArgToCompletionRoutine, PREASON_CONTEXT WakeContext,
//	    ULONG TolerableDelay);
//
// Documented in synchapi.h (Windows 7 and later).
func SetWaitableTimerEx(timer windows.Handle, dueTime int64, period int32, tolerableDelay uint32) error {
	r, _, err := procSetWaitableTimerEx.Call(uintptr(timer), uintptr(unsafe.Pointer(&dueTime)),
		uintptr(period), 0, 0, 0, uintptr(tolerableDelay))
	if r == 0 {
		return err
	}
	return nil
}

// SetThreadPriority sets a thread's priority level.
//
//	BOOL SetThreadPriority(HANDLE hThread, int nPriority);
//
// Documented in processthreadsapi.h.
func SetThreadPriority(thread windows.Handle, priority int32) error {
	r, _, err := procSetThreadPriority.Call(uintptr(thread), uintptr(priority))
	if r == 0 {
		return err
	}
	return nil
}

// GetThreadPriority reads a thread's priority level (the handle needs
// THREAD_QUERY_INFORMATION or THREAD_QUERY_LIMITED_INFORMATION).
//
//	int GetThreadPriority(HANDLE hThread);
//
// ("GetThreadPriority function (processthreadsapi.h)", Microsoft Learn:
// THREAD_PRIORITY_ERROR_RETURN on failure.)
func GetThreadPriority(thread windows.Handle) (int32, error) {
	r, _, err := procGetThreadPriority.Call(uintptr(thread))
	if int32(r) == THREAD_PRIORITY_ERROR_RETURN {
		return 0, err
	}
	return int32(r), nil
}

// GetThreadTimes reads a thread's kernel and user time, in 100 ns units
// (the handle needs THREAD_QUERY_INFORMATION or
// THREAD_QUERY_LIMITED_INFORMATION).
//
//	BOOL GetThreadTimes(HANDLE hThread, LPFILETIME lpCreationTime,
//	    LPFILETIME lpExitTime, LPFILETIME lpKernelTime, LPFILETIME lpUserTime);
//
// ("GetThreadTimes function (processthreadsapi.h)", Microsoft Learn.)
func GetThreadTimes(thread windows.Handle) (kernel, user windows.Filetime, err error) {
	var creation, exit windows.Filetime
	r, _, callErr := procGetThreadTimes.Call(uintptr(thread), uintptr(unsafe.Pointer(&creation)), uintptr(unsafe.Pointer(&exit)),
		uintptr(unsafe.Pointer(&kernel)), uintptr(unsafe.Pointer(&user)))
	if r == 0 {
		return kernel, user, callErr
	}
	return kernel, user, nil
}

// IsProcessInJob reports whether a process runs in the job (the handle
// needs PROCESS_QUERY_INFORMATION or PROCESS_QUERY_LIMITED_INFORMATION;
// job 0 asks about any job).
//
//	BOOL IsProcessInJob(HANDLE ProcessHandle, HANDLE JobHandle,
//	    PBOOL Result);
//
// ("IsProcessInJob function (jobapi.h)", Microsoft Learn.)
func IsProcessInJob(process, job windows.Handle) (bool, error) {
	var result int32
	r, _, err := procIsProcessInJob.Call(uintptr(process), uintptr(job), uintptr(unsafe.Pointer(&result)))
	if r == 0 {
		return false, err
	}
	return result != 0, nil
}

// SetProcessInformation sets a process information class. It is resolved
// at run time: Windows 7 does not have it.
//
//	BOOL SetProcessInformation(HANDLE hProcess,
//	    PROCESS_INFORMATION_CLASS ProcessInformationClass,
//	    LPVOID ProcessInformation, DWORD ProcessInformationSize);
//
// Documented in processthreadsapi.h (Windows 8 and later).
func SetProcessInformation(process windows.Handle, class uint32, info unsafe.Pointer, size uint32) error {
	if err := procSetProcessInformation.Find(); err != nil {
		return err
	}
	r, _, err := procSetProcessInformation.Call(uintptr(process), uintptr(class), uintptr(info), uintptr(size))
	if r == 0 {
		return err
	}
	return nil
}

// TimeSetEvent starts a multimedia timer that sets event every delay ms.
//
//	MMRESULT timeSetEvent(UINT uDelay, UINT uResolution,
//	    LPTIMECALLBACK lpTimeProc, DWORD_PTR dwUser, UINT fuEvent);
//
// Documented in timeapi.h ("timeSetEvent function", Microsoft Learn;
// obsolete in favour of CreateTimerQueueTimer, still present). It returns
// the timer's id, or NULL on failure, and sets no last error: the failure
// is ErrReturnedNULL, never GetLastError's leftover.
func TimeSetEvent(delayMs, resolutionMs uint32, event windows.Handle, flags uint32) (uint32, error) {
	r, _, _ := procTimeSetEvent.Call(uintptr(delayMs), uintptr(resolutionMs), uintptr(event), 0, uintptr(flags))
	if r == 0 {
		return 0, ErrReturnedNULL
	}
	return uint32(r), nil
}

// TimeKillEvent stops a multimedia timer; with TIME_KILL_SYNCHRONOUS no
// event occurs after it returns.
//
//	MMRESULT timeKillEvent(UINT uTimerID);
//
// Documented in timeapi.h: TIMERR_NOERROR, or MMSYSERR_INVALPARAM when the
// timer does not exist.
func TimeKillEvent(id uint32) error {
	r, _, _ := procTimeKillEvent.Call(uintptr(id))
	return MMError(uint32(r))
}

// TimeBeginPeriod requests a minimum timer period in whole milliseconds.
//
//	MMRESULT timeBeginPeriod(UINT uPeriod);
//
// Documented in timeapi.h ("timeBeginPeriod function", Microsoft Learn):
// TIMERR_NOERROR, or TIMERR_NOCANDO when uPeriod is out of range. x/sys's
// wrapper reports GetLastError instead, which winmm does not set, so it is
// bound here to report the MMRESULT.
func TimeBeginPeriod(ms uint32) error {
	r, _, _ := procTimeBeginPeriod.Call(uintptr(ms))
	return MMError(uint32(r))
}

// TimeEndPeriod withdraws a timeBeginPeriod request of the same period.
//
//	MMRESULT timeEndPeriod(UINT uPeriod);
//
// Documented in timeapi.h ("timeEndPeriod function", Microsoft Learn), with
// the same MMRESULTs as timeBeginPeriod.
func TimeEndPeriod(ms uint32) error {
	r, _, _ := procTimeEndPeriod.Call(uintptr(ms))
	return MMError(uint32(r))
}

// CreateTimerQueueTimer starts a timer on the default timer queue that
// calls callback (from windows.NewCallback) after dueMs and every periodMs.
//
//	BOOL CreateTimerQueueTimer(PHANDLE phNewTimer, HANDLE TimerQueue,
//	    WAITORTIMERCALLBACK Callback, PVOID Parameter, DWORD DueTime,
//	    DWORD Period, ULONG Flags);
//
// Documented in threadpoollegacyapiset.h.
func CreateTimerQueueTimer(callback, parameter uintptr, dueMs, periodMs, flags uint32) (windows.Handle, error) {
	var timer windows.Handle
	r, _, err := procCreateTimerQueueTimer.Call(uintptr(unsafe.Pointer(&timer)), 0, callback, parameter,
		uintptr(dueMs), uintptr(periodMs), uintptr(flags))
	if r == 0 {
		return 0, err
	}
	return timer, nil
}

// DeleteTimerQueueTimer stops a timer-queue timer; completion
// INVALID_HANDLE_VALUE waits for running callbacks to finish.
//
//	BOOL DeleteTimerQueueTimer(HANDLE TimerQueue, HANDLE Timer,
//	    HANDLE CompletionEvent);
func DeleteTimerQueueTimer(timer windows.Handle) error {
	r, _, err := procDeleteTimerQueueTimer.Call(0, uintptr(timer), uintptr(windows.InvalidHandle))
	if r == 0 {
		return err
	}
	return nil
}

// qpcFrequency is QueryPerformanceFrequency, read once: it is fixed at boot.
var qpcFrequency = sync.OnceValue(func() int64 {
	f, err := QueryPerformanceFrequency()
	if err != nil || f <= 0 {
		// Cannot happen on Windows XP or later ("QueryPerformanceFrequency
		// function", Microsoft Learn: "the function will always succeed"); a
		// clock that does not run would make every sample zero, so fail
		// loudly instead. err is not nil here: QueryPerformanceFrequency
		// returns one whenever it fails.
		panic(fmt.Sprintf("QueryPerformanceFrequency: %v", err))
	}
	return f
})

// QPCFrequency is the performance counter's frequency in Hz.
func QPCFrequency() int64 { return qpcFrequency() }

// QPCNanos reads QueryPerformanceCounter in ns. The count is split before
// scaling so that count × 1e9 cannot overflow after days of uptime.
func QPCNanos() int64 {
	f := qpcFrequency()
	var c int64
	QueryPerformanceCounter(&c)
	return c/f*1_000_000_000 + c%f*1_000_000_000/f
}

var (
	user32 = windows.NewLazySystemDLL("user32.dll")

	procFreeConsole           = kernel32.NewProc("FreeConsole")
	procGetConsoleProcessList = kernel32.NewProc("GetConsoleProcessList")
	procSetWindowsHookExW     = user32.NewProc("SetWindowsHookExW")
	procCallNextHookEx        = user32.NewProc("CallNextHookEx")
	procUnhookWindowsHookEx   = user32.NewProc("UnhookWindowsHookEx")
	procGetMessageW           = user32.NewProc("GetMessageW")
	procPostThreadMessageW    = user32.NewProc("PostThreadMessageW")
)

// Constants for the desktop-wide ESC watch (winuser.h).
const (
	WH_KEYBOARD_LL = 13
	HC_ACTION      = 0
	WM_KEYDOWN     = 0x0100
	WM_SYSKEYDOWN  = 0x0104
	WM_QUIT        = 0x0012
	VK_ESCAPE      = 0x1B
)

// KBDLLHOOKSTRUCT is what a low-level keyboard hook receives (winuser.h).
type KBDLLHOOKSTRUCT struct {
	VkCode      uint32
	ScanCode    uint32
	Flags       uint32
	Time        uint32
	DwExtraInfo uintptr
}

// MSG is a thread message (winuser.h).
type MSG struct {
	Hwnd    windows.Handle
	Message uint32
	WParam  uintptr
	LParam  uintptr
	Time    uint32
	Pt      struct{ X, Y int32 }
	Private uint32
}

// FreeConsole detaches the process from its console.
//
//	BOOL FreeConsole(void);
//
// Documented in consoleapi.h.
func FreeConsole() error {
	if r, _, err := procFreeConsole.Call(); r == 0 {
		return err
	}
	return nil
}

// GetConsoleProcessList counts the processes attached to this process's
// console: 1 when the console was made for this process alone (Explorer
// starting a double-clicked console program), more in a terminal. A
// process with no console gets the call's error.
//
//	DWORD WINAPI GetConsoleProcessList(LPDWORD lpdwProcessList,
//	    DWORD dwProcessCount);
//
// ("GetConsoleProcessList function", Microsoft Learn; consoleapi3.h.) It
// returns the number of ids stored, or when the buffer is too small the
// number it needs, storing none; 0 on failure, since every console has at
// least one process. The buffer needs room for one id at least: a count is
// all that is wanted here, so a small buffer serves.
func GetConsoleProcessList() (uint32, error) {
	var ids [4]uint32
	r, _, err := procGetConsoleProcessList.Call(uintptr(unsafe.Pointer(&ids[0])), uintptr(len(ids)))
	if r == 0 {
		return 0, err
	}
	return uint32(r), nil
}

// SetWindowsHookEx installs a hook; for WH_KEYBOARD_LL, threadID is 0 and
// the hook sees every key on the desktop, called on the installing thread,
// which must pump messages.
//
//	HHOOK SetWindowsHookExW(int idHook, HOOKPROC lpfn, HINSTANCE hmod,
//	    DWORD dwThreadId);
//
// Documented in winuser.h.
func SetWindowsHookEx(id int, proc uintptr, module windows.Handle, threadID uint32) (windows.Handle, error) {
	r, _, err := procSetWindowsHookExW.Call(uintptr(id), proc, uintptr(module), uintptr(threadID))
	if r == 0 {
		return 0, err
	}
	return windows.Handle(r), nil
}

// CallNextHookEx passes a hook event on. nCode is a C int, 32 bits on
// every Windows ABI: it is sign-extended into its register, so a negative
// code (which a hook must pass on untouched) stays negative.
//
//	LRESULT CallNextHookEx(HHOOK hhk, int nCode, WPARAM wParam, LPARAM lParam);
//
// Documented in winuser.h ("CallNextHookEx function", "LowLevelKeyboardProc
// callback function", Microsoft Learn).
func CallNextHookEx(code int32, wparam, lparam uintptr) uintptr {
	r, _, _ := procCallNextHookEx.Call(0, uintptr(code), wparam, lparam)
	return r
}

// UnhookWindowsHookEx removes a hook.
//
//	BOOL UnhookWindowsHookEx(HHOOK hhk);
//
// Documented in winuser.h.
func UnhookWindowsHookEx(hook windows.Handle) {
	procUnhookWindowsHookEx.Call(uintptr(hook))
}

// GetMessage blocks until the thread has a message; it returns 0 for
// WM_QUIT and -1 on error.
//
//	BOOL GetMessageW(LPMSG lpMsg, HWND hWnd, UINT wMsgFilterMin, UINT wMsgFilterMax);
//
// Documented in winuser.h.
func GetMessage(msg *MSG) int32 {
	r, _, _ := procGetMessageW.Call(uintptr(unsafe.Pointer(msg)), 0, 0, 0)
	return int32(r)
}

// PostThreadMessage posts a message to a thread's queue.
//
//	BOOL PostThreadMessageW(DWORD idThread, UINT Msg, WPARAM wParam, LPARAM lParam);
//
// Documented in winuser.h.
func PostThreadMessage(threadID uint32, msg uint32, wparam, lparam uintptr) error {
	if r, _, err := procPostThreadMessageW.Call(uintptr(threadID), uintptr(msg), wparam, lparam); r == 0 {
		return err
	}
	return nil
}

// IgnoreTimerResolutionThrottling opts this process out of Windows 11's
// throttling of timer-resolution requests, so that a request holds while
// the process's windows are hidden or minimised: ControlMask names the
// policy and a StateMask of 0 turns the throttling off
// (PROCESS_POWER_THROTTLING_STATE, processthreadsapi.h). Before Windows 11
// the information class is unknown and there is nothing to opt out of.
func IgnoreTimerResolutionThrottling() error {
	state := ProcessPowerThrottlingState{
		Version:     PROCESS_POWER_THROTTLING_CURRENT_VERSION,
		ControlMask: PROCESS_POWER_THROTTLING_IGNORE_TIMER_RESOLUTION,
	}
	return SetProcessInformation(windows.CurrentProcess(), ProcessPowerThrottling, unsafe.Pointer(&state), uint32(unsafe.Sizeof(state)))
}

// Event Tracing for Windows: the controller calls (start, stop, flush a
// session, enable a provider in it) and the consumer calls (open a
// real-time session, deliver its events to a callback), from advapi32
// (evntrace.h, evntcons.h; "Event Tracing Functions", Microsoft Learn).
// TRACEHANDLE is a ULONG64, passed in one register on amd64 and arm64, the
// only Windows targets tickscope builds (etw_layout_windows.go holds the
// structures to their documented 64-bit sizes).
var (
	advapi32           = windows.NewLazySystemDLL("advapi32.dll")
	procStartTraceW    = advapi32.NewProc("StartTraceW")
	procControlTraceW  = advapi32.NewProc("ControlTraceW")
	procEnableTraceEx2 = advapi32.NewProc("EnableTraceEx2")
	procOpenTraceW     = advapi32.NewProc("OpenTraceW")
	procProcessTrace   = advapi32.NewProc("ProcessTrace")
	procCloseTrace     = advapi32.NewProc("CloseTrace")
)

// ETW constants, with their documented names (evntrace.h, evntcons.h,
// wmistr.h).
const (
	WNODE_FLAG_TRACED_GUID           = 0x00020000
	EVENT_TRACE_REAL_TIME_MODE       = 0x00000100
	EVENT_TRACE_CONTROL_STOP         = 1
	EVENT_TRACE_CONTROL_FLUSH        = 3
	EVENT_CONTROL_CODE_ENABLE        = 1 // EVENT_CONTROL_CODE_ENABLE_PROVIDER
	EVENT_CONTROL_CODE_CAPTURE_STATE = 2
	TRACE_LEVEL_INFORMATION          = 4
	PROCESS_TRACE_MODE_REAL_TIME     = 0x00000100
	PROCESS_TRACE_MODE_EVENT_RECORD  = 0x10000000
	EVENT_HEADER_FLAG_64_BIT_HEADER  = 0x0040
	// INVALID_PROCESSTRACE_HANDLE is OpenTraceW's failure on 64-bit
	// Windows ((TRACEHANDLE)INVALID_HANDLE_VALUE).
	INVALID_PROCESSTRACE_HANDLE = ^uint64(0)
)

// WnodeHeader is WNODE_HEADER (wmistr.h).
type WnodeHeader struct {
	BufferSize        uint32
	ProviderID        uint32
	HistoricalContext uint64
	TimeStamp         int64 // union with CountLost and KernelHandle
	GUID              windows.GUID
	ClientContext     uint32
	Flags             uint32
}

// EventTraceProperties is EVENT_TRACE_PROPERTIES (evntrace.h).
type EventTraceProperties struct {
	Wnode               WnodeHeader
	BufferSize          uint32
	MinimumBuffers      uint32
	MaximumBuffers      uint32
	MaximumFileSize     uint32
	LogFileMode         uint32
	FlushTimer          uint32
	EnableFlags         uint32
	AgeLimit            int32
	NumberOfBuffers     uint32
	FreeBuffers         uint32
	EventsLost          uint32
	BuffersWritten      uint32
	LogBuffersLost      uint32
	RealTimeBuffersLost uint32
	LoggerThreadID      windows.Handle
	LogFileNameOffset   uint32
	LoggerNameOffset    uint32
}

// TraceProperties is an EVENT_TRACE_PROPERTIES followed by the room the
// calls write the session's name and log file name into, as they require.
type TraceProperties struct {
	EventTraceProperties
	LoggerName  [1024]uint16
	LogFileName [1024]uint16
}

// NewTraceProperties is a properties block for a real-time session (or
// for stopping and flushing one), its sizes and offsets set.
func NewTraceProperties() *TraceProperties {
	p := &TraceProperties{}
	p.Wnode.BufferSize = uint32(unsafe.Sizeof(*p))
	p.Wnode.Flags = WNODE_FLAG_TRACED_GUID
	p.Wnode.ClientContext = 1 // QueryPerformanceCounter time stamps
	p.LogFileMode = EVENT_TRACE_REAL_TIME_MODE
	p.FlushTimer = 1 // deliver at least every second
	p.LoggerNameOffset = uint32(unsafe.Offsetof(p.LoggerName))
	p.LogFileNameOffset = uint32(unsafe.Offsetof(p.LogFileName))
	return p
}

// EventTraceHeader is EVENT_TRACE_HEADER (evntrace.h).
type EventTraceHeader struct {
	Size           uint16
	FieldTypeFlags uint16
	Version        uint32
	ThreadID       uint32
	ProcessID      uint32
	TimeStamp      int64
	GUID           windows.GUID
	ProcessorTime  uint64
}

// EventTrace is EVENT_TRACE (evntrace.h).
type EventTrace struct {
	Header           EventTraceHeader
	InstanceID       uint32
	ParentInstanceID uint32
	ParentGUID       windows.GUID
	MofData          uintptr
	MofLength        uint32
	ClientContext    uint32
}

// TraceLogfileHeader is TRACE_LOGFILE_HEADER (evntrace.h).
type TraceLogfileHeader struct {
	BufferSize         uint32
	Version            uint32
	ProviderVersion    uint32
	NumberOfProcessors uint32
	EndTime            int64
	TimerResolution    uint32
	MaximumFileSize    uint32
	LogFileMode        uint32
	BuffersWritten     uint32
	LogInstanceGUID    windows.GUID
	LoggerName         *uint16
	LogFileName        *uint16
	TimeZone           windows.Timezoneinformation
	BootTime           int64
	PerfFreq           int64
	StartTime          int64
	ReservedFlags      uint32
	BuffersLost        uint32
}

// EventTraceLogfile is EVENT_TRACE_LOGFILEW (evntrace.h).
type EventTraceLogfile struct {
	LogFileName         *uint16
	LoggerName          *uint16
	CurrentTime         int64
	BuffersRead         uint32
	ProcessTraceMode    uint32 // union with LogFileMode
	CurrentEvent        EventTrace
	LogfileHeader       TraceLogfileHeader
	BufferCallback      uintptr
	BufferSize          uint32
	Filled              uint32
	EventsLost          uint32
	EventRecordCallback uintptr // union with EventCallback
	IsKernelTrace       uint32
	Context             uintptr
}

// EventDescriptor is EVENT_DESCRIPTOR (evntprov.h).
type EventDescriptor struct {
	ID      uint16
	Version uint8
	Channel uint8
	Level   uint8
	Opcode  uint8
	Task    uint16
	Keyword uint64
}

// EventHeader is EVENT_HEADER (evntcons.h).
type EventHeader struct {
	Size            uint16
	HeaderType      uint16
	Flags           uint16
	EventProperty   uint16
	ThreadID        uint32
	ProcessID       uint32
	TimeStamp       int64
	ProviderID      windows.GUID
	EventDescriptor EventDescriptor
	ProcessorTime   uint64
	ActivityID      windows.GUID
}

// EventRecord is EVENT_RECORD (evntcons.h).
type EventRecord struct {
	EventHeader       EventHeader
	BufferContext     uint32 // ETW_BUFFER_CONTEXT
	ExtendedDataCount uint16
	UserDataLength    uint16
	ExtendedData      uintptr
	UserData          unsafe.Pointer
	UserContext       uintptr
}

// etwStatus is an ETW call's ULONG result as an error (a Win32 error
// code), nil for ERROR_SUCCESS.
func etwStatus(r uintptr) error {
	if r == 0 {
		return nil
	}
	return windows.Errno(r)
}

// StartTrace starts a trace session named name.
//
//	ULONG WMIAPI StartTraceW(PTRACEHANDLE TraceHandle, LPCWSTR InstanceName,
//	    PEVENT_TRACE_PROPERTIES Properties);
//
// ("StartTraceW function (evntrace.h)", Microsoft Learn.)
func StartTrace(name string, props *TraceProperties) (uint64, error) {
	p, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return 0, err
	}
	var handle uint64
	r, _, _ := procStartTraceW.Call(uintptr(unsafe.Pointer(&handle)), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(props)))
	return handle, etwStatus(r)
}

// ControlTrace stops or flushes a trace session, by handle or, with
// handle 0, by name.
//
//	ULONG WMIAPI ControlTraceW(TRACEHANDLE TraceHandle, LPCWSTR InstanceName,
//	    PEVENT_TRACE_PROPERTIES Properties, ULONG ControlCode);
//
// ("ControlTraceW function (evntrace.h)", Microsoft Learn.)
func ControlTrace(handle uint64, name string, props *TraceProperties, code uint32) error {
	var p *uint16
	if name != "" {
		var err error
		if p, err = windows.UTF16PtrFromString(name); err != nil {
			return err
		}
	}
	r, _, _ := procControlTraceW.Call(uintptr(handle), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(props)), uintptr(code))
	return etwStatus(r)
}

// EnableTraceEx2 enables a provider in a session, or asks it for its
// rundown (EVENT_CONTROL_CODE_CAPTURE_STATE).
//
//	ULONG WMIAPI EnableTraceEx2(TRACEHANDLE TraceHandle, LPCGUID ProviderId,
//	    ULONG ControlCode, UCHAR Level, ULONGLONG MatchAnyKeyword,
//	    ULONGLONG MatchAllKeyword, ULONG Timeout,
//	    PENABLE_TRACE_PARAMETERS EnableParameters);
//
// ("EnableTraceEx2 function (evntrace.h)", Microsoft Learn.) Timeout 0
// returns at once; EnableParameters may be NULL.
func EnableTraceEx2(handle uint64, provider *windows.GUID, code uint32, level uint8, matchAny, matchAll uint64) error {
	r, _, _ := procEnableTraceEx2.Call(uintptr(handle), uintptr(unsafe.Pointer(provider)), uintptr(code), uintptr(level), uintptr(matchAny), uintptr(matchAll), 0, 0)
	return etwStatus(r)
}

// OpenTrace opens a session for consuming its events.
//
//	TRACEHANDLE WMIAPI OpenTraceW(PEVENT_TRACE_LOGFILEW Logfile);
//
// ("OpenTraceW function (evntrace.h)", Microsoft Learn: on failure it
// returns INVALID_PROCESSTRACE_HANDLE and sets the last error.)
func OpenTrace(logfile *EventTraceLogfile) (uint64, error) {
	r, _, err := procOpenTraceW.Call(uintptr(unsafe.Pointer(logfile)))
	if uint64(r) == INVALID_PROCESSTRACE_HANDLE {
		return 0, err
	}
	return uint64(r), nil
}

// ProcessTrace delivers a real-time session's events to the callback of
// the handle's logfile until the session stops or CloseTrace is called.
//
//	ULONG WMIAPI ProcessTrace(PTRACEHANDLE HandleArray, ULONG HandleCount,
//	    LPFILETIME StartTime, LPFILETIME EndTime);
//
// ("ProcessTrace function (evntrace.h)", Microsoft Learn.)
func ProcessTrace(handle uint64) error {
	r, _, _ := procProcessTrace.Call(uintptr(unsafe.Pointer(&handle)), 1, 0, 0)
	return etwStatus(r)
}

// CloseTrace closes a handle OpenTrace returned.
//
//	ULONG WMIAPI CloseTrace(TRACEHANDLE TraceHandle);
//
// ("CloseTrace function (evntrace.h)", Microsoft Learn.)
func CloseTrace(handle uint64) error {
	r, _, _ := procCloseTrace.Call(uintptr(handle))
	return etwStatus(r)
}

var (
	shell32             = windows.NewLazySystemDLL("shell32.dll")
	procShellExecuteExW = shell32.NewProc("ShellExecuteExW")
)

// ShellExecuteEx's fMask flags and the show command it passes on
// (shellapi.h, winuser.h).
const (
	// SEE_MASK_NOCLOSEPROCESS returns the started process's handle in
	// HProcess, which the caller closes.
	SEE_MASK_NOCLOSEPROCESS = 0x00000040
	// SEE_MASK_NOASYNC waits for the execution to be started before
	// returning, for a caller that may exit soon after.
	SEE_MASK_NOASYNC = 0x00000100
	SW_SHOWNORMAL    = 1
)

// SHELLEXECUTEINFOW is ShellExecuteExW's parameter block (shellapi.h);
// the union of hIcon and hMonitor is HIconOrMonitor.
type SHELLEXECUTEINFOW struct {
	CbSize         uint32
	FMask          uint32
	Hwnd           windows.Handle
	LpVerb         *uint16
	LpFile         *uint16
	LpParameters   *uint16
	LpDirectory    *uint16
	NShow          int32
	HInstApp       windows.Handle
	LpIDList       uintptr
	LpClass        *uint16
	HkeyClass      windows.Handle
	DwHotKey       uint32
	HIconOrMonitor windows.Handle
	HProcess       windows.Handle
}

// ShellExecuteEx performs an operation on a file through the shell; with
// the verb "runas" it starts a program elevated, after the UAC prompt. A
// user who declines the prompt gives ERROR_CANCELLED.
//
//	BOOL ShellExecuteExW([in, out] SHELLEXECUTEINFOW *pExecInfo);
//
// Documented in shellapi.h ("ShellExecuteExW function", Microsoft Learn).
// golang.org/x/sys/windows binds ShellExecuteW, which returns no process
// handle to wait on.
func ShellExecuteEx(info *SHELLEXECUTEINFOW) error {
	info.CbSize = uint32(unsafe.Sizeof(*info))
	if r, _, err := procShellExecuteExW.Call(uintptr(unsafe.Pointer(info))); r == 0 {
		return err
	}
	return nil
}

var (
	powrprof = windows.NewLazySystemDLL("powrprof.dll")

	procPowerRegisterSuspendResumeNotification   = powrprof.NewProc("PowerRegisterSuspendResumeNotification")
	procPowerUnregisterSuspendResumeNotification = powrprof.NewProc("PowerUnregisterSuspendResumeNotification")
)

// Constants of the suspend/resume notification (winuser.h, pbt.h).
const (
	DEVICE_NOTIFY_CALLBACK = 2
	PBT_APMSUSPEND         = 0x4
	PBT_APMRESUMESUSPEND   = 0x7
	PBT_APMRESUMEAUTOMATIC = 0x12
)

// DEVICE_NOTIFY_SUBSCRIBE_PARAMETERS is the recipient of a callback
// registration (powrprof.h): Callback is a
//
//	ULONG CALLBACK DeviceNotifyCallbackRoutine(PVOID Context, ULONG Type, PVOID Setting);
//
// made with windows.NewCallback; Type is a PBT_ event.
type DEVICE_NOTIFY_SUBSCRIBE_PARAMETERS struct {
	Callback uintptr
	Context  uintptr
}

// PowerRegisterSuspendResumeNotification registers params' callback for
// the system's suspend and resume (Windows 8+). params must stay alive
// (and unmoved) until the registration is withdrawn.
//
//	DWORD PowerRegisterSuspendResumeNotification(DWORD Flags, HANDLE Recipient,
//	    PHPOWERNOTIFY RegistrationHandle);
//
// Documented in powerbase.h (Powrprof.dll); Flags must be
// DEVICE_NOTIFY_CALLBACK; it returns ERROR_SUCCESS or an error code.
func PowerRegisterSuspendResumeNotification(params *DEVICE_NOTIFY_SUBSCRIBE_PARAMETERS) (windows.Handle, error) {
	if err := procPowerRegisterSuspendResumeNotification.Find(); err != nil {
		return 0, err
	}
	var registration windows.Handle
	r, _, _ := procPowerRegisterSuspendResumeNotification.Call(DEVICE_NOTIFY_CALLBACK, uintptr(unsafe.Pointer(params)), uintptr(unsafe.Pointer(&registration)))
	if r != 0 {
		return 0, windows.Errno(r)
	}
	return registration, nil
}

// PowerUnregisterSuspendResumeNotification withdraws a registration.
//
//	DWORD PowerUnregisterSuspendResumeNotification(HPOWERNOTIFY RegistrationHandle);
//
// Documented in powerbase.h (Powrprof.dll).
func PowerUnregisterSuspendResumeNotification(registration windows.Handle) error {
	if r, _, _ := procPowerUnregisterSuspendResumeNotification.Call(uintptr(registration)); r != 0 {
		return windows.Errno(r)
	}
	return nil
}
