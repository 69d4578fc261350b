// Package winapi binds the Win32 and NT calls tickscope needs that
// golang.org/x/sys/windows lacks (or binds with the wrong error: the winmm
// calls report an MMRESULT, not GetLastError). The DLL calls are generated
// by golang.org/x/sys/windows/mkwinsyscall into zwinapi_windows.go from the
// //sys lines of winapi_windows.go and taskschd_windows.go, each beside its
// documented signature and the Microsoft Learn page that documents it; what
// mkwinsyscall cannot write is beside them by hand: the structures (the ETW
// ones held to their documented sizes at compile time), the errors of calls
// that report failure in their own way, and the Task Scheduler's COM
// interfaces, whose methods are vtable entries rather than DLL exports. On
// other OSes the package holds only the portable MMRESULT names, so that
// they are tested there.
//
// The Task Scheduler calls are bound by hand (a dozen vtable calls through
// syscall.SyscallN) rather than with github.com/go-ole/go-ole, which the
// module proxy serves at v1.3.0: go-ole reaches these dual interfaces
// through IDispatch::Invoke by method name with VARIANT arguments
// (oleutil.CallMethod), so a misspelt name or a wrong argument is found at
// run time on Windows only. The vtable binding is not checked by the
// compiler either (its indexes are literals written by hand), but
// TestVtableIndexes holds each index to a table of taskschd.h's method
// order wherever the package's Windows tests run, Wine included; and
// go-ole would be a second COM layer beside golang.org/x/sys, through
// which every other system call goes.
package winapi

// mkwinsyscall is run from golang.org/x/sys at the version go.mod requires,
// the one the generated code calls into; .ci/run checks that the generated
// file is what it writes.
//go:generate go run golang.org/x/sys/windows/mkwinsyscall -output zwinapi_windows.go winapi_windows.go taskschd_windows.go
