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
// this process asked; 0 when unknown) is finer than a request, allowing
// for the kernel's quantisation.
func HeldFinerThan(held, request100ns uint32) bool {
	return held != 0 && held+quantisation100ns < request100ns
}

// PeriodInForce reports whether the period in force (0 when unknown) is a
// request's or finer, allowing for the kernel's quantisation: what a
// started holder's request looks like from another process.
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
