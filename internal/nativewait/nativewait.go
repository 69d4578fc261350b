// Package nativewait is the one home of the OS's native waits, shared by
// the public library (package precise) and the OS seam (package platform)
// so that a change to how an OS sleeps is made once:
//
//   - the high-resolution clock every wait is timed on: CLOCK_MONOTONIC on
//     Linux (the clock clock_nanosleep's deadlines are on), read as cheaply
//     as Go's own clock; QueryPerformanceCounter on Windows; Go's monotonic
//     clock elsewhere;
//   - the native sleeps: clock_nanosleep on an absolute CLOCK_MONOTONIC
//     deadline (Linux); the waitable timers, with the probe for
//     CREATE_WAITABLE_TIMER_HIGH_RESOLUTION and the fallback where it does
//     not exist, and kernel32 Sleep through the system call (Windows);
//     Go's time.Sleep elsewhere;
//   - the margins a hybrid wait hands over to its spin at: spin_sleep's
//     fixed one (the seam's hybrid method) and the bounds of precise's
//     calibrated one;
//   - on Windows, the process's one NtSetTimerResolution request, which
//     the seam's Apply and precise.Hold share: nested holds replace it in
//     place, the finest held is in force, the last release withdraws it.
//
// Its errors name the OS call that failed. It imports nothing of tickscope
// but the Win32 bindings, so that the library does not depend on the tool.
package nativewait
