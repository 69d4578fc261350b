package report_test

import (
	"bytes"
	"testing"

	"github.com/tickscope/tickscope/internal/printable/printabletest"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// forged and terminalSafe are the renderers' shared hostile string and
// check (printabletest).
const forged = printabletest.Forged

var terminalSafe = printabletest.TerminalSafe

// TestStringsFromOutsideArePrintable: every text output that shows a
// string tickscope did not write (a process's name, a definition read
// back, the OS's and a raw file's strings, an error) shows it escaped;
// the use cases' own texts are held to it beside them.
func TestStringsFromOutsideArePrintable(t *testing.T) {
	var b bytes.Buffer
	report.WriteQuery(&b, &timerinfo.Report{OS: "linux", Arch: "amd64", CPUs: 1, Warnings: []string{forged}, Linux: &timerinfo.Linux{
		KernelRelease: forged, Clocksource: forged, AvailableClocksource: []string{forged},
		CPUIdleStates: []timerinfo.CPUIdleState{{Name: forged, Description: forged}}}})
	terminalSafe(t, "query", b.String())

	b.Reset()
	report.WriteMeasurement(&b, &report.Measurement{OS: "linux", Method: forged, DelayNs: 1_000_000, Conditions: timerinfo.Conditions{Priority: forged}, Warnings: []string{forged}})
	terminalSafe(t, "a measurement", b.String())

}
