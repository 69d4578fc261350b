// Package winapi binds the Win32 and NT calls tickscope needs that
// golang.org/x/sys/windows lacks (or binds with the wrong error: the winmm
// calls report an MMRESULT, not GetLastError). Each binding carries its
// documented signature and where it is documented. The DLL functions are
// in winapi_windows.go, in the shape mkwinsyscall generates; the Task
// Scheduler's COM interfaces, whose methods are vtable entries rather than
// DLL exports, are in taskschd_windows.go. On other OSes the package holds
// only the portable MMRESULT names, so that they are tested there.
//
// The Task Scheduler calls are bound by hand (a dozen vtable calls through
// syscall.SyscallN) rather than with github.com/go-ole/go-ole, which the
// module proxy serves at v1.3.0: go-ole reaches these dual interfaces
// through IDispatch::Invoke by method name with VARIANT arguments
// (oleutil.CallMethod), so a misspelt name or a wrong argument is found at
// run time on Windows only, where the vtable binding is checked by the
// compiler against taskschd.h's order; and a second COM layer would sit
// beside golang.org/x/sys, through which every other system call goes.
package winapi
