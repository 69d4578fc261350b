package winapi

import (
	"fmt"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

// The DLL calls are declared by the //sys lines below, each with the C
// prototype it binds and the Microsoft Learn page that documents it, and
// generated into zwinapi_windows.go by mkwinsyscall, at the version of
// golang.org/x/sys that go.mod names. A //sys line says where a failure is
// read: "(err error)" is GetLastError's, after the return value given in
// brackets ([failretval==0] unless another is named); "(ret error)" is a
// returned Win32 error code; "(ntstatus error)" a returned NTSTATUS; a
// name ending in "?" is resolved at run time, and its absence is the
// error. What a call reports some other way (an MMRESULT, a NULL with no
// last error, an HRESULT) is returned as a value and turned into an error
// by the function beside it. The go:generate line is in doc.go, which
// every OS builds, so that go generate runs it on any machine.

// The timer resolution, from ntdll. Both calls are undocumented by
// Microsoft (microsoft/Windows-Dev-Performance#115); their signatures are
// ntdll's as every timer tool uses them, in 100 ns units.
//
//	NTSTATUS NtQueryTimerResolution(PULONG MaximumResolution,
//	    PULONG MinimumResolution, PULONG CurrentResolution);
//
//sys	ntQueryTimerResolution(coarsest *uint32, finest *uint32, current *uint32) (ntstatus error) = ntdll.NtQueryTimerResolution

// NtSetTimerResolution requests (set true) or withdraws (set false) this
// process's timer period, and stores the period in force afterwards, which
// is what the kernel granted, in current.
//
//	NTSTATUS NtSetTimerResolution(ULONG DesiredResolution,
//	    BOOLEAN SetResolution, PULONG CurrentResolution);
//
//sys	NtSetTimerResolution(desired uint32, set bool, current *uint32) (ntstatus error) = ntdll.NtSetTimerResolution

// NtQueryTimerResolution reports the timer periods in 100 ns units.
// "Maximum resolution" is the coarsest period and "minimum resolution" the
// finest, so the results are named here for what they hold.
func NtQueryTimerResolution() (coarsest, finest, current uint32, err error) {
	if err := ntQueryTimerResolution(&coarsest, &finest, &current); err != nil {
		return 0, 0, 0, err
	}
	return coarsest, finest, current, nil
}

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

// QueryPerformanceCounter reads the performance counter. It cannot fail on
// Windows XP and later.
//
//	BOOL QueryPerformanceCounter(LARGE_INTEGER *lpPerformanceCount);
//
// ("QueryPerformanceCounter function (profileapi.h)", Microsoft Learn.)
//
//sys	QueryPerformanceCounter(count *int64) (err error) = kernel32.QueryPerformanceCounter

// QueryPerformanceFrequency reads the performance counter's frequency,
// fixed at boot.
//
//	BOOL QueryPerformanceFrequency(LARGE_INTEGER *lpFrequency);
//
// ("QueryPerformanceFrequency function (profileapi.h)", Microsoft Learn.)
//
//sys	QueryPerformanceFrequency(frequency *int64) (err error) = kernel32.QueryPerformanceFrequency

// QueryUnbiasedInterruptTime reads the unbiased interrupt-time count in
// 100 ns units, which "is incremented at each clock interrupt by the length
// of a clock tick" (and excludes sleep and hibernation). It fails only when
// given a null pointer; Windows 7 and later. x/sys does not bind it.
//
//	BOOL QueryUnbiasedInterruptTime(PULONGLONG UnbiasedTime);
//
// ("QueryUnbiasedInterruptTime function (realtimeapiset.h)", Microsoft Learn.)
//
//sys	QueryUnbiasedInterruptTime(unbiasedTime *uint64) (err error) = kernel32.QueryUnbiasedInterruptTime

// QueryInterruptTime reads the interrupt-time count in 100 ns units, which
// unlike the unbiased count goes on while the machine sleeps or
// hibernates; Windows 10 and later (HasQueryInterruptTime tells). It
// cannot fail.
//
//	void QueryInterruptTime(PULONGLONG lpInterruptTime);
//
// ("QueryInterruptTime function (realtimeapiset.h)", Microsoft Learn.)
//
//sys	QueryInterruptTime(interruptTime *uint64) = kernel32.QueryInterruptTime

// GetTickCount64 is the milliseconds since the system started, the time
// it slept or hibernated included (Windows Vista and later). It cannot
// fail.
//
//	ULONGLONG GetTickCount64();
//
// ("GetTickCount64 function (sysinfoapi.h)", Microsoft Learn.)
//
//sys	GetTickCount64() (ms uint64) = kernel32.GetTickCount64

// HasQueryInterruptTime tells whether this Windows has QueryInterruptTime.
func HasQueryInterruptTime() bool { return procQueryInterruptTime.Find() == nil }

// CreateWaitableTimerEx creates a waitable timer (Windows Vista and later);
// flags are CREATE_WAITABLE_TIMER_*.
//
//	HANDLE CreateWaitableTimerExW(LPSECURITY_ATTRIBUTES lpTimerAttributes,
//	    LPCWSTR lpTimerName, DWORD dwFlags, DWORD dwDesiredAccess);
//
// ("CreateWaitableTimerExW function (synchapi.h)", Microsoft Learn.)
//
//sys	CreateWaitableTimerEx(attributes *windows.SecurityAttributes, name *uint16, flags uint32, desiredAccess uint32) (timer windows.Handle, err error) = kernel32.CreateWaitableTimerExW

// SetWaitableTimerEx arms a waitable timer (Windows 7 and later). A
// negative *dueTime is relative, in 100 ns units; period 0 makes it fire
// once; the completion routine, its argument and the wake context may be
// 0.
//
//	BOOL SetWaitableTimerEx(HANDLE hTimer, const LARGE_INTEGER *lpDueTime,
//	    LONG lPeriod, PTIMERAPCROUTINE pfnCompletionRoutine,
//	    LPVOID lpArgToCompletionRoutine, PREASON_CONTEXT WakeContext,
//	    ULONG TolerableDelay);
//
// ("SetWaitableTimerEx function (synchapi.h)", Microsoft Learn.)
//
//sys	SetWaitableTimerEx(timer windows.Handle, dueTime *int64, period int32, completionRoutine uintptr, completionArg unsafe.Pointer, wakeContext unsafe.Pointer, tolerableDelay uint32) (err error) = kernel32.SetWaitableTimerEx

// SetThreadPriority sets a thread's priority level.
//
//	BOOL SetThreadPriority(HANDLE hThread, int nPriority);
//
// ("SetThreadPriority function (processthreadsapi.h)", Microsoft Learn.)
//
//sys	SetThreadPriority(thread windows.Handle, priority int32) (err error) = kernel32.SetThreadPriority

// GetThreadPriority reads a thread's priority level (the handle needs
// THREAD_QUERY_INFORMATION or THREAD_QUERY_LIMITED_INFORMATION). It fails
// with THREAD_PRIORITY_ERROR_RETURN, not 0, which is a level.
//
//	int GetThreadPriority(HANDLE hThread);
//
// ("GetThreadPriority function (processthreadsapi.h)", Microsoft Learn.)
//
//sys	GetThreadPriority(thread windows.Handle) (priority int32, err error) [failretval==THREAD_PRIORITY_ERROR_RETURN] = kernel32.GetThreadPriority

// GetThreadTimes reads a thread's creation and exit times and the kernel
// and user time it has run, in 100 ns units (the handle needs
// THREAD_QUERY_INFORMATION or THREAD_QUERY_LIMITED_INFORMATION).
//
//	BOOL GetThreadTimes(HANDLE hThread, LPFILETIME lpCreationTime,
//	    LPFILETIME lpExitTime, LPFILETIME lpKernelTime, LPFILETIME lpUserTime);
//
// ("GetThreadTimes function (processthreadsapi.h)", Microsoft Learn.)
//
//sys	GetThreadTimes(thread windows.Handle, creationTime *windows.Filetime, exitTime *windows.Filetime, kernelTime *windows.Filetime, userTime *windows.Filetime) (err error) = kernel32.GetThreadTimes

// IsProcessInJob reports in result whether a process runs in the job (the
// handle needs PROCESS_QUERY_INFORMATION or
// PROCESS_QUERY_LIMITED_INFORMATION; job 0 asks about any job).
//
//	BOOL IsProcessInJob(HANDLE ProcessHandle, HANDLE JobHandle,
//	    PBOOL Result);
//
// ("IsProcessInJob function (jobapi.h)", Microsoft Learn.)
//
//sys	IsProcessInJob(process windows.Handle, job windows.Handle, result *bool) (err error) = kernel32.IsProcessInJob

// SetInformationJobObject sets a job object's information class. It is
// bound here, rather than used from golang.org/x/sys/windows, whose binding
// takes the information as a uintptr: a pointer converted before that Go
// function is called is not kept in place until the system call is made
// (unsafe.Pointer's rule 4), while this one converts it in
// syscall.SyscallN's own argument list.
//
//	BOOL SetInformationJobObject(HANDLE hJob,
//	    JOBOBJECTINFOCLASS JobObjectInformationClass,
//	    LPVOID lpJobObjectInformation, DWORD cbJobObjectInformationLength);
//
// ("SetInformationJobObject function (jobapi2.h)", Microsoft Learn.)
//
//sys	SetInformationJobObject(job windows.Handle, class uint32, information unsafe.Pointer, size uint32) (err error) = kernel32.SetInformationJobObject

// SetProcessInformation sets a process information class (Windows 8 and
// later). It is resolved at run time: Windows 7 does not have it.
//
//	BOOL SetProcessInformation(HANDLE hProcess,
//	    PROCESS_INFORMATION_CLASS ProcessInformationClass,
//	    LPVOID ProcessInformation, DWORD ProcessInformationSize);
//
// ("SetProcessInformation function (processthreadsapi.h)", Microsoft Learn.)
//
//sys	SetProcessInformation(process windows.Handle, class uint32, information unsafe.Pointer, size uint32) (err error) = kernel32.SetProcessInformation?

// CreateTimerQueueTimer starts a timer on a timer queue (0: the default
// one) that calls callback (from windows.NewCallback) with parameter after
// dueTime ms and every period ms, and stores its handle in *timer.
//
//	BOOL CreateTimerQueueTimer(PHANDLE phNewTimer, HANDLE TimerQueue,
//	    WAITORTIMERCALLBACK Callback, PVOID Parameter, DWORD DueTime,
//	    DWORD Period, ULONG Flags);
//
// ("CreateTimerQueueTimer function (threadpoollegacyapiset.h)", Microsoft Learn.)
//
//sys	CreateTimerQueueTimer(timer *windows.Handle, queue windows.Handle, callback uintptr, parameter uintptr, dueTime uint32, period uint32, flags uint32) (err error) = kernel32.CreateTimerQueueTimer

// DeleteTimerQueueTimer stops a timer-queue timer; a completion event of
// INVALID_HANDLE_VALUE waits for running callbacks to finish.
//
//	BOOL DeleteTimerQueueTimer(HANDLE TimerQueue, HANDLE Timer,
//	    HANDLE CompletionEvent);
//
// ("DeleteTimerQueueTimer function (threadpoollegacyapiset.h)", Microsoft Learn.)
//
//sys	DeleteTimerQueueTimer(queue windows.Handle, timer windows.Handle, completionEvent windows.Handle) (err error) = kernel32.DeleteTimerQueueTimer

// The multimedia timer, from winmm. These calls report failure in their
// MMRESULT and set no last error, so they are bound to return it, and
// the functions below turn it into an error: x/sys's TimeBeginPeriod
// reports GetLastError instead, which names whatever failed before.
//
//	MMRESULT timeSetEvent(UINT uDelay, UINT uResolution,
//	    LPTIMECALLBACK lpTimeProc, DWORD_PTR dwUser, UINT fuEvent);
//
// ("timeSetEvent function", Microsoft Learn; timeapi.h, obsolete in favour
// of CreateTimerQueueTimer, still present.) It returns the timer's id, or
// NULL on failure.
//
//sys	timeSetEvent(delay uint32, resolution uint32, callback uintptr, user uintptr, event uint32) (id uint32) = winmm.timeSetEvent
//
//	MMRESULT timeKillEvent(UINT uTimerID);
//
// ("timeKillEvent function (timeapi.h)", Microsoft Learn: TIMERR_NOERROR,
// or MMSYSERR_INVALPARAM when the timer does not exist.)
//
//sys	timeKillEvent(id uint32) (result uint32) = winmm.timeKillEvent
//
//	MMRESULT timeBeginPeriod(UINT uPeriod);
//	MMRESULT timeEndPeriod(UINT uPeriod);
//
// ("timeBeginPeriod function (timeapi.h)", "timeEndPeriod function
// (timeapi.h)", Microsoft Learn: TIMERR_NOERROR, or TIMERR_NOCANDO when
// uPeriod is out of range.)
//
//sys	timeBeginPeriod(period uint32) (result uint32) = winmm.timeBeginPeriod
//sys	timeEndPeriod(period uint32) (result uint32) = winmm.timeEndPeriod

// TimeSetEvent starts a multimedia timer that sets event every delay ms.
// Its failure, a NULL id with no last error, is ErrReturnedNULL, never
// GetLastError's leftover.
func TimeSetEvent(delayMs, resolutionMs uint32, event windows.Handle, flags uint32) (uint32, error) {
	id := timeSetEvent(delayMs, resolutionMs, uintptr(event), 0, flags)
	if id == 0 {
		return 0, ErrReturnedNULL
	}
	return id, nil
}

// TimeKillEvent stops a multimedia timer; with TIME_KILL_SYNCHRONOUS no
// event occurs after it returns.
func TimeKillEvent(id uint32) error { return MMError(timeKillEvent(id)) }

// TimeBeginPeriod requests a minimum timer period in whole milliseconds.
func TimeBeginPeriod(ms uint32) error { return MMError(timeBeginPeriod(ms)) }

// TimeEndPeriod withdraws a timeBeginPeriod request of the same period.
func TimeEndPeriod(ms uint32) error { return MMError(timeEndPeriod(ms)) }

// qpcFrequency is QueryPerformanceFrequency, read once: it is fixed at boot.
var qpcFrequency = sync.OnceValue(func() int64 {
	var f int64
	if err := QueryPerformanceFrequency(&f); err != nil || f <= 0 {
		// Cannot happen on Windows XP or later ("QueryPerformanceFrequency
		// function", Microsoft Learn: "the function will always succeed"); a
		// clock that does not run would make every sample zero, and a zero
		// frequency would divide by zero, so fail loudly instead.
		panic(fmt.Sprintf("QueryPerformanceFrequency: frequency %d, error %v", f, err))
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
//	BOOL WINAPI FreeConsole(void);
//
// ("FreeConsole function", Microsoft Learn; consoleapi.h.)
//
//sys	FreeConsole() (err error) = kernel32.FreeConsole

// GetConsoleProcessList stores the ids of the processes attached to this
// process's console in processList and returns how many there are: 1 when
// the console was made for this process alone (Explorer starting a
// double-clicked console program), more in a terminal. When the list is
// too small it returns the number it needs and stores none, so a few
// entries serve to count; it needs room for one at least. It returns 0 on
// failure (every console has at least one process), and a process with no
// console gets the call's error.
//
//	DWORD WINAPI GetConsoleProcessList(LPDWORD lpdwProcessList,
//	    DWORD dwProcessCount);
//
// ("GetConsoleProcessList function", Microsoft Learn; consoleapi3.h.)
//
//sys	GetConsoleProcessList(processList []uint32) (n uint32, err error) = kernel32.GetConsoleProcessList

// ConsoleProcessCount counts the processes attached to this process's
// console, with room for a few ids: a count is all that is wanted.
func ConsoleProcessCount() (uint32, error) {
	var ids [4]uint32
	return GetConsoleProcessList(ids[:])
}

// SetWindowsHookEx installs a hook; for WH_KEYBOARD_LL, threadID is 0 and
// the hook sees every key on the desktop, called on the installing thread,
// which must pump messages.
//
//	HHOOK SetWindowsHookExW(int idHook, HOOKPROC lpfn, HINSTANCE hmod,
//	    DWORD dwThreadId);
//
// ("SetWindowsHookExW function (winuser.h)", Microsoft Learn.)
//
//sys	SetWindowsHookEx(id int32, fn uintptr, module windows.Handle, threadID uint32) (hook windows.Handle, err error) = user32.SetWindowsHookExW

// CallNextHookEx passes a hook event on (hook is ignored; 0 will do). code
// is a C int, 32 bits on every Windows ABI: it is sign-extended into its
// register, so a negative code (which a hook must pass on untouched) stays
// negative. lparam is the hook's LPARAM, which for the hooks tickscope
// sets is a pointer (a low-level keyboard hook's KBDLLHOOKSTRUCT); it is
// taken as one, so that it is converted in the system call's own argument
// list (unsafe.Pointer's rule 4).
//
//	LRESULT CallNextHookEx(HHOOK hhk, int nCode, WPARAM wParam, LPARAM lParam);
//
// ("CallNextHookEx function (winuser.h)", "LowLevelKeyboardProc callback
// function", Microsoft Learn.)
//
//sys	CallNextHookEx(hook windows.Handle, code int32, wparam uintptr, lparam unsafe.Pointer) (result uintptr) = user32.CallNextHookEx

// UnhookWindowsHookEx removes a hook.
//
//	BOOL UnhookWindowsHookEx(HHOOK hhk);
//
// ("UnhookWindowsHookEx function (winuser.h)", Microsoft Learn.)
//
//sys	UnhookWindowsHookEx(hook windows.Handle) (err error) = user32.UnhookWindowsHookEx

// GetMessage blocks until the thread (window 0) has a message in the
// range (0, 0: any); it returns 0 for WM_QUIT and -1 on error.
//
//	BOOL GetMessageW(LPMSG lpMsg, HWND hWnd, UINT wMsgFilterMin,
//	    UINT wMsgFilterMax);
//
// ("GetMessageW function (winuser.h)", Microsoft Learn.)
//
//sys	GetMessage(msg *MSG, window windows.Handle, msgFilterMin uint32, msgFilterMax uint32) (ret int32, err error) [failretval==-1] = user32.GetMessageW

// PostThreadMessage posts a message to a thread's queue.
//
//	BOOL PostThreadMessageW(DWORD idThread, UINT Msg, WPARAM wParam,
//	    LPARAM lParam);
//
// ("PostThreadMessageW function (winuser.h)", Microsoft Learn.)
//
//sys	PostThreadMessage(threadID uint32, msg uint32, wparam uintptr, lparam uintptr) (err error) = user32.PostThreadMessageW

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
// They return a Win32 error code (ULONG), except OpenTraceW. TRACEHANDLE
// is a ULONG64, passed in one register on amd64 and arm64, the only
// Windows targets tickscope builds (etw_windows.go holds the structures,
// etw_layout_windows.go holds them to their documented 64-bit sizes).
// Properties is an EVENT_TRACE_PROPERTIES followed by the room the calls
// write names into, as they require.

// StartTrace starts a trace session named name and stores its handle.
//
//	ULONG WMIAPI StartTraceW(PTRACEHANDLE TraceHandle, LPCWSTR InstanceName,
//	    PEVENT_TRACE_PROPERTIES Properties);
//
// ("StartTraceW function (evntrace.h)", Microsoft Learn.)
//
//sys	StartTrace(handle *uint64, name string, properties *TraceProperties) (ret error) = advapi32.StartTraceW

// ControlTrace stops or flushes a trace session, by handle or, with
// handle 0, by name (nil when the handle names it).
//
//	ULONG WMIAPI ControlTraceW(TRACEHANDLE TraceHandle, LPCWSTR InstanceName,
//	    PEVENT_TRACE_PROPERTIES Properties, ULONG ControlCode);
//
// ("ControlTraceW function (evntrace.h)", Microsoft Learn.)
//
//sys	ControlTrace(handle uint64, name *uint16, properties *TraceProperties, controlCode uint32) (ret error) = advapi32.ControlTraceW

// EnableTraceEx2 enables a provider in a session, or asks it for its
// rundown (EVENT_CONTROL_CODE_CAPTURE_STATE). Timeout 0 returns at once;
// parameters may be nil.
//
//	ULONG WMIAPI EnableTraceEx2(TRACEHANDLE TraceHandle, LPCGUID ProviderId,
//	    ULONG ControlCode, UCHAR Level, ULONGLONG MatchAnyKeyword,
//	    ULONGLONG MatchAllKeyword, ULONG Timeout,
//	    PENABLE_TRACE_PARAMETERS EnableParameters);
//
// ("EnableTraceEx2 function (evntrace.h)", Microsoft Learn.)
//
//sys	EnableTraceEx2(handle uint64, provider *windows.GUID, controlCode uint32, level uint8, matchAnyKeyword uint64, matchAllKeyword uint64, timeout uint32, parameters unsafe.Pointer) (ret error) = advapi32.EnableTraceEx2

// OpenTrace opens a session for consuming its events; on failure it
// returns INVALID_PROCESSTRACE_HANDLE and sets the last error.
//
//	TRACEHANDLE WMIAPI OpenTraceW(PEVENT_TRACE_LOGFILEW Logfile);
//
// ("OpenTraceW function (evntrace.h)", Microsoft Learn.)
//
//sys	OpenTrace(logfile *EventTraceLogfile) (handle uint64, err error) [failretval==INVALID_PROCESSTRACE_HANDLE] = advapi32.OpenTraceW

// ProcessTrace delivers the events of the sessions OpenTrace opened to
// their logfiles' callbacks until the sessions stop or CloseTrace is
// called; start and end may be nil.
//
//	ULONG WMIAPI ProcessTrace(PTRACEHANDLE HandleArray, ULONG HandleCount,
//	    LPFILETIME StartTime, LPFILETIME EndTime);
//
// ("ProcessTrace function (evntrace.h)", Microsoft Learn.)
//
//sys	ProcessTrace(handles []uint64, start *windows.Filetime, end *windows.Filetime) (ret error) = advapi32.ProcessTrace

// CloseTrace closes a handle OpenTrace returned.
//
//	ULONG WMIAPI CloseTrace(TRACEHANDLE TraceHandle);
//
// ("CloseTrace function (evntrace.h)", Microsoft Learn.)
//
//sys	CloseTrace(handle uint64) (ret error) = advapi32.CloseTrace

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

// shellExecuteEx performs an operation on a file through the shell.
// golang.org/x/sys/windows binds ShellExecuteW, which returns no process
// handle to wait on.
//
//	BOOL ShellExecuteExW([in, out] SHELLEXECUTEINFOW *pExecInfo);
//
// ("ShellExecuteExW function (shellapi.h)", Microsoft Learn.)
//
//sys	shellExecuteEx(info *SHELLEXECUTEINFOW) (err error) = shell32.ShellExecuteExW

// ShellExecuteEx performs an operation on a file through the shell, with
// info's size set as the call requires; with the verb "runas" it starts a
// program elevated, after the UAC prompt. A user who declines the prompt
// gives ERROR_CANCELLED.
func ShellExecuteEx(info *SHELLEXECUTEINFOW) error {
	info.CbSize = uint32(unsafe.Sizeof(*info))
	return shellExecuteEx(info)
}

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

// PowerRegisterSuspendResumeNotification registers recipient's callback
// (flags DEVICE_NOTIFY_CALLBACK, the only value it takes) for the system's
// suspend and resume, and stores the registration's handle. recipient must
// stay alive (and unmoved) until the registration is withdrawn. It is
// resolved at run time (Windows 8 and later).
//
//	DWORD PowerRegisterSuspendResumeNotification(DWORD Flags,
//	    HANDLE Recipient, PHPOWERNOTIFY RegistrationHandle);
//
// ("PowerRegisterSuspendResumeNotification function (powerbase.h)",
// Microsoft Learn; Powrprof.dll.)
//
//sys	PowerRegisterSuspendResumeNotification(flags uint32, recipient *DEVICE_NOTIFY_SUBSCRIBE_PARAMETERS, registration *windows.Handle) (ret error) = powrprof.PowerRegisterSuspendResumeNotification?

// PowerUnregisterSuspendResumeNotification withdraws a registration.
//
//	DWORD PowerUnregisterSuspendResumeNotification(
//	    HPOWERNOTIFY RegistrationHandle);
//
// ("PowerUnregisterSuspendResumeNotification function (powerbase.h)",
// Microsoft Learn; Powrprof.dll.)
//
//sys	PowerUnregisterSuspendResumeNotification(registration windows.Handle) (ret error) = powrprof.PowerUnregisterSuspendResumeNotification
