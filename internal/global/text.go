package global

import (
	"fmt"
	"io"
	"strconv"

	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// ms is a duration in ms with 4 decimals, as the hold commands print
// their checks.
func ms(ns int64) string { return strconv.FormatFloat(float64(ns)/1e6, 'f', 4, 64) }

// WriteGlobalCheck is verify-global.
func WriteGlobalCheck(w io.Writer, res *GlobalCheck) {
	if res.Verdict == VerdictNotApplicable {
		fmt.Fprintln(w, res.Reason)
		return
	}
	fmt.Fprintf(w, "requests here are %s: %s\n", res.Verdict, res.Reason)
	if res.BaselineP50Ns != 0 {
		fmt.Fprintf(w, "  other process, nothing held   Sleep(1) p50 %s ms\n", ms(res.BaselineP50Ns))
		fmt.Fprintf(w, "  other process, %-14s Sleep(1) p50 %s ms\n", timerinfo.FormatPeriodMS(res.Held100ns)+" ms held", ms(res.HeldP50Ns))
	}
	fmt.Fprintf(w, "  query's request model         %s\n", res.RequestModel)
}

// WriteGlobal is global on|off.
func WriteGlobal(w io.Writer, res *GlobalResult) {
	switch {
	case !res.Changed:
		fmt.Fprintf(w, "%s is already %s; nothing was changed\n", res.Key, report.RegistryValue(res.After))
		return
	case res.On:
		fmt.Fprintf(w, "set %s = 1\n", res.Key)
	default:
		fmt.Fprintf(w, "removed %s (it was %s)\n", res.Key, report.RegistryValue(res.Before))
	}
	fmt.Fprintln(w, "it takes effect after a reboot")
	fmt.Fprintf(w, "after the reboot: %s\n", res.RequestModel)
	fmt.Fprintf(w, "undo: %s\n", res.Undo)
}
