package timerinfo

import (
	"fmt"
	"time"
)

// The answers verify-global gives.
const (
	VerdictGlobal       = "global"
	VerdictPerProcess   = "per-process"
	VerdictInconclusive = "inconclusive"
)

// GlobalVerdict decides whether a request held in one process reached
// another, from the other process's Sleep(1) p50 with nothing held
// (baseline) and with the request held elsewhere (held). With nothing held
// Sleep(1) waits for the default tick (about 15.6 ms); a request that
// reaches the process brings it near the granted period. A figure in
// between, or a baseline that is already fast, decides nothing.
func GlobalVerdict(baselineNs, heldNs int64, granted100ns uint32) (verdict, reason string) {
	ms := func(ns int64) string { return fmt.Sprintf("%.2f ms", float64(ns)/1e6) }
	grantedNs := int64(granted100ns) * 100
	switch {
	case baselineNs < int64(4*time.Millisecond):
		return VerdictInconclusive, fmt.Sprintf("with nothing held the other process's Sleep(1) already took %s, so the timer was not at rest", ms(baselineNs))
	case heldNs <= baselineNs/2 && heldNs <= 2*grantedNs+int64(time.Millisecond):
		return VerdictGlobal, fmt.Sprintf("the other process's Sleep(1) went from %s to %s while this process held %s ms", ms(baselineNs), ms(heldNs), FormatPeriodMS(granted100ns))
	case heldNs*4 >= baselineNs*3:
		return VerdictPerProcess, fmt.Sprintf("the other process's Sleep(1) stayed at %s (%s with nothing held) while this process held %s ms", ms(heldNs), ms(baselineNs), FormatPeriodMS(granted100ns))
	}
	return VerdictInconclusive, fmt.Sprintf("the other process's Sleep(1) went from %s to %s, neither the held period nor the default tick", ms(baselineNs), ms(heldNs))
}
