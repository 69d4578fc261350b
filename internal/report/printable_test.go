package report_test

import (
	"bytes"
	"strings"
	"testing"
	"unicode"

	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// forged is a string from outside tickscope as a hostile user writes it:
// a clipboard write (OSC 52), an erased line, a carriage return and a
// forged line, CSI as C1, NUL, DEL and a bidirectional override.
const forged = "\x1b]52;c;Zm9yZ2Vk\a\x1b[2K\r  recommend FORGED\n\u009b2J\x00\x7f\u202e"

// terminalSafe fails the test when out holds a character a terminal
// acts on, other than the newlines that end its lines, or a line that
// starts with the forged one.
func terminalSafe(t *testing.T, what, out string) {
	t.Helper()
	for _, r := range out {
		if r != '\n' && r != ' ' && !unicode.IsPrint(r) {
			t.Errorf("%s writes %U to the terminal:\n%q", what, r, out)
			return
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "recommend FORGED") {
			t.Errorf("%s writes a forged line:\n%s", what, out)
		}
	}
	if !strings.Contains(out, `\x1b]52;c;`) {
		t.Errorf("%s does not show the escaped string:\n%s", what, out)
	}
}

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
