package platform

import (
	"debug/pe"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/registry"

	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/winapi"
)

func (system) Elevated() bool { return windows.GetCurrentProcessToken().IsElevated() }

func (system) IgnoreTimerThrottling() error { return winapi.IgnoreTimerResolutionThrottling() }

// UserSID is the SID of this process's token user in string form: the
// user the logon task names in its LogonTrigger and Principal
// ("GetTokenInformation function", TokenUser; "ConvertSidToStringSidW
// function", Microsoft Learn). Elevated by the same account, the token
// user is the person logged on; elevated with an administrator's
// credentials (over the shoulder) it is that administrator, which
// apply --persist warns about.
func (system) UserSID() (string, error) {
	user, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return "", err
	}
	return user.User.Sid.String(), nil
}

// The console delivers Ctrl+C and its closing to every process attached to
// it, the program run starts included, and Go cannot send them to one
// process: run does not pass them on.
func (system) ForwardSignals() bool { return false }

func (system) DetachConsole() error {
	// The windowless holder (tickscope-holder.exe, the GUI subsystem) has
	// no console to detach from: --no-console, which its task still
	// passes, is then moot, not a failure.
	if _, err := winapi.ConsoleProcessCount(); err != nil {
		return nil
	}
	// Once detached, closing the console or Ctrl+C no longer reaches
	// tickscope.
	if err := winapi.FreeConsole(); err != nil {
		return &seam.OSError{Call: "FreeConsole", Err: err}
	}
	return nil
}

// Console counts the processes on this process's console
// (GetConsoleProcessList). One is a console made for tickscope alone, as
// Explorer makes for a double-clicked console program, provided its
// standard input is that console (GetConsoleMode succeeds), so that a
// program that started tickscope on a console of its own with input from
// a pipe never waits for a key. No console and no standard error is the
// GUI-subsystem holder started by Task Scheduler, whose output would go
// nowhere ("GetStdHandle function": a GUI process started without
// redirection has no standard handles, Microsoft Learn).
func (system) Console() seam.Console {
	n, err := winapi.ConsoleProcessCount()
	if err == nil {
		var mode uint32
		if n == 1 && windows.GetConsoleMode(windows.Handle(os.Stdin.Fd()), &mode) == nil {
			return seam.ConsoleAlone
		}
		return seam.ConsoleShared
	}
	if h, err := windows.GetStdHandle(windows.STD_ERROR_HANDLE); err != nil || h == 0 || h == windows.InvalidHandle {
		return seam.ConsoleNone
	}
	return seam.ConsoleShared
}

// ExeSubsystem reads the Subsystem field of an executable's PE optional
// header with debug/pe ("PE Format", Optional Header Windows-Specific
// Fields, Microsoft Learn): the windowless holder must be a GUI-subsystem
// build, or Task Scheduler's logon start opens a console window.
func (system) ExeSubsystem(path string) (uint16, error) {
	f, err := pe.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	switch h := f.OptionalHeader.(type) {
	case *pe.OptionalHeader64:
		return h.Subsystem, nil
	case *pe.OptionalHeader32:
		return h.Subsystem, nil
	}
	return 0, fmt.Errorf("%s has no PE optional header", path)
}

var (
	escapeHookOnce sync.Once
	escapeHookProc uintptr
	escapeStop     struct {
		sync.Mutex
		stop func()
	}
)

func (system) WatchDesktopEscape(stop func()) (restore func(), err error) {
	// A low-level keyboard hook on a thread of its own that blocks in
	// GetMessage: it costs no CPU between key presses and takes no key from
	// other programs.
	escapeHookOnce.Do(func() {
		// nCode is a C int: 32 bits, whose register's upper half is
		// undefined on amd64 and arm64, so it is read as an int32
		// ("LowLevelKeyboardProc callback function", Microsoft Learn).
		escapeHookProc = windows.NewCallback(func(code int32, wparam uintptr, key *winapi.KBDLLHOOKSTRUCT) uintptr {
			if code == winapi.HC_ACTION && (wparam == winapi.WM_KEYDOWN || wparam == winapi.WM_SYSKEYDOWN) {
				if key.VkCode == winapi.VK_ESCAPE {
					escapeStop.Lock()
					if escapeStop.stop != nil {
						escapeStop.stop()
					}
					escapeStop.Unlock()
				}
			}
			return winapi.CallNextHookEx(0, code, wparam, unsafe.Pointer(key))
		})
	})
	escapeStop.Lock()
	escapeStop.stop = stop
	escapeStop.Unlock()
	type started struct {
		thread uint32
		err    error
	}
	ready := make(chan started, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var module windows.Handle
		windows.GetModuleHandleEx(0, nil, &module)
		hook, err := winapi.SetWindowsHookEx(winapi.WH_KEYBOARD_LL, escapeHookProc, module, 0)
		if err != nil {
			ready <- started{err: &seam.OSError{Call: "SetWindowsHookExW(WH_KEYBOARD_LL)", Err: err}}
			return
		}
		ready <- started{thread: windows.GetCurrentThreadId()}
		var msg winapi.MSG
		for {
			if r, _ := winapi.GetMessage(&msg, 0, 0, 0); r <= 0 {
				break
			}
		}
		winapi.UnhookWindowsHookEx(hook)
	}()
	s := <-ready
	if s.err != nil {
		return nil, s.err
	}
	return func() {
		escapeStop.Lock()
		escapeStop.stop = nil
		escapeStop.Unlock()
		winapi.PostThreadMessage(s.thread, winapi.WM_QUIT, 0, 0)
	}, nil
}

func (system) GlobalRequests() *uint32 {
	return readDWORD(timerinfo.KernelKeyPath, timerinfo.GlobalRequestsValue)
}

func (system) SetGlobalRequests(on bool) error {
	k, err := registry.OpenKey(registry.LOCAL_MACHINE, timerinfo.KernelKeyPath, registry.SET_VALUE)
	if err != nil {
		// The key exists on every Windows; it is opened, never created.
		return &seam.OSError{Call: `RegOpenKeyEx(HKLM\` + timerinfo.KernelKeyPath + ")", Err: err}
	}
	defer k.Close()
	if on {
		if err := k.SetDWordValue(timerinfo.GlobalRequestsValue, 1); err != nil {
			return &seam.OSError{Call: "RegSetValueEx(" + timerinfo.GlobalRequestsValue + ")", Err: err}
		}
		return nil
	}
	if err := k.DeleteValue(timerinfo.GlobalRequestsValue); err != nil && !errors.Is(err, registry.ErrNotExist) {
		return &seam.OSError{Call: "RegDeleteValue(" + timerinfo.GlobalRequestsValue + ")", Err: err}
	}
	return nil
}

// Windows has no timer slack.
func (system) ProcessSlack(int) (int64, error)  { return 0, seam.ErrUnsupported }
func (system) SetProcessSlack(int, int64) error { return seam.ErrUnsupported }

// WatchResume registers a suspend/resume notification
// (PowerRegisterSuspendResumeNotification, Windows 8+) whose callback calls
// resumed on a goroutine of its own for each resume, so that the system's
// callback returns at once. windows.NewCallback's slots are few (about
// 2000 a process) and never freed, and a ui holds again and again: there
// is one callback, resumeCallback, and each registration passes it the key
// under which its resumed is kept.
func (system) WatchResume(resumed func()) (func(), error) {
	resumers.Lock()
	resumers.next++
	key := resumers.next
	if resumers.each == nil {
		resumers.each = map[uintptr]func(){}
	}
	resumers.each[key] = resumed
	resumers.Unlock()
	forget := func() {
		resumers.Lock()
		delete(resumers.each, key)
		resumers.Unlock()
	}
	params := &winapi.DEVICE_NOTIFY_SUBSCRIBE_PARAMETERS{Callback: resumeCallback, Context: key}
	var registration windows.Handle
	if err := winapi.PowerRegisterSuspendResumeNotification(winapi.DEVICE_NOTIFY_CALLBACK, params, &registration); err != nil {
		forget()
		return nil, &seam.OSError{Call: "PowerRegisterSuspendResumeNotification", Err: err}
	}
	return func() {
		winapi.PowerUnregisterSuspendResumeNotification(registration)
		runtime.KeepAlive(params)
		forget()
	}, nil
}

// The registrations of WatchResume, by the key each passes its callback as
// Context (a number, not a pointer). The callback's Type is a ULONG, 32
// bits: in a register (x64, ARM64) its upper half is whatever the caller
// left there, which the callee may not rely on ("x64 calling convention",
// Microsoft Learn), so it is declared uint32 and only the low half is
// read.
var (
	resumers struct {
		sync.Mutex
		next uintptr
		each map[uintptr]func()
	}
	resumeCallback = windows.NewCallback(func(context uintptr, event uint32, setting uintptr) uintptr {
		if event != winapi.PBT_APMRESUMEAUTOMATIC && event != winapi.PBT_APMRESUMESUSPEND {
			return 0 // ERROR_SUCCESS
		}
		resumers.Lock()
		resumed := resumers.each[context]
		resumers.Unlock()
		if resumed != nil {
			go resumed()
		}
		return 0
	})
)

// SleptFor: Windows tells a holder of a resume by WatchResume instead.
func (system) SleptFor() (time.Duration, bool) { return 0, false }
