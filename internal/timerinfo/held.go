package timerinfo

import "fmt"

// Another process's finer request shows up in two ways: the period in force
// is finer than what this process asked for, or NtSetTimerResolution answers
// a request with a grant well below it. These are tickscope's one
// definition of each.

// quantisation100ns is how far a period in force may lie from the request
// it answers and still be that request: 1 µs, for the kernel's
// quantisation (0.500 -> 0.4992 ms, 1.000 -> 0.9996 ms).
const quantisation100ns = 10

// HeldFinerThan reports whether a period held (the one in force before
// this process asked; 0 when unknown) is finer than a request, so that
// measuring the request measures the held period instead: only a request
// at or finer than the period in force is measured as itself. There is no
// allowance for the kernel's quantisation here: a request a few 100 ns
// coarser than the held period is granted that period, and the fast
// window of a build can be under 1 µs wide, the size such an allowance
// would be.
func HeldFinerThan(held, request100ns uint32) bool {
	return held != 0 && held < request100ns
}

// PeriodInForce reports whether the period in force (0 when unknown) is a
// request's or finer, allowing for the kernel's quantisation: what a
// started holder's request looks like from another process (its own
// request, granted a little finer, is in force).
func PeriodInForce(current, request100ns uint32) bool {
	return current != 0 && current <= request100ns+quantisation100ns
}

// GrantShowsFinerHold reports whether a grant is well below its request.
// Grants are quantised a little below requests (0.500 -> 0.4992 ms); only a
// grant more than 2 % below means a finer request held elsewhere is in force.
func GrantShowsFinerHold(request100ns, granted100ns uint32) bool {
	return granted100ns != 0 && uint64(granted100ns)*100 < uint64(request100ns)*98
}

// HeldWarning is query's warning when the timer runs finer than the
// coarsest period while this process holds nothing.
func HeldWarning(current, coarsest uint32) string {
	return fmt.Sprintf("the timer is held at %s ms, finer than the coarsest %s ms: another process holds a request, so measurements of coarser requests are skewed",
		FormatPeriodMS(current), FormatPeriodMS(coarsest))
}

// NoHighResolutionTimersWarning is what query (and so apply, which prints
// query's warnings) says on a build without high-resolution waitable
// timers.
const NoHighResolutionTimersWarning = "this build has no high-resolution waitable timers (before Windows 10 1803), so the Go runtime calls timeBeginPeriod(1) in tickscope while it runs and timeEndPeriod(1) whenever it idles, which would withdraw an NtSetTimerResolution request: tickscope holds whole milliseconds here through timeBeginPeriod, which survives it, and refuses finer periods"

// WholeMillisecondHold is how a period is held on a build without
// high-resolution waitable timers. There the Go runtime calls
// timeEndPeriod(1) each time all its threads idle (runtime/os_windows.go,
// osRelax), and winmm's timeEndPeriod withdraws the process's one
// NtSetTimerResolution request when its own count reaches zero, so a
// request made with NtSetTimerResolution lasts only until tickscope first
// idles. A timeBeginPeriod request is counted by winmm beside the
// runtime's ("timeBeginPeriod function", Microsoft Learn: each call is
// matched by a timeEndPeriod of the same period), so it survives: a whole
// number of milliseconds is held that way, and a finer period is refused
// with the reason. With high-resolution timers the runtime never calls
// either, and ms is 0: hold with NtSetTimerResolution.
func WholeMillisecondHold(highResolutionTimers bool, request100ns uint32) (ms uint32, err error) {
	if highResolutionTimers || request100ns == 0 {
		return 0, nil
	}
	if request100ns%10000 != 0 {
		return 0, fmt.Errorf("%s ms cannot be held on this build: it has no high-resolution waitable timers (before Windows 10 1803), so the Go runtime calls timeEndPeriod(1) whenever tickscope idles, which withdraws an NtSetTimerResolution request; whole milliseconds are held through timeBeginPeriod instead (--ms 1)",
			FormatPeriodMS(request100ns))
	}
	return request100ns / 10000, nil
}
