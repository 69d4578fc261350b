package report_test

import (
	"testing"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/report"
)

// TestPrintPicksTheShapeByTheFile: the commands and analyze print through
// Print, so the file alone decides the shape, and the path and stop are
// carried into it.
func TestPrintPicksTheShapeByTheFile(t *testing.T) {
	for _, tc := range []struct {
		command string
		stopped bool
		want    string
	}{
		{"measure", false, "*report.Measurement"},
		{"measure", true, "*report.Measurement"},
		{"curve", false, "*report.Curve"},
		{"curve", true, "*report.Curve"},
		{"compare", false, "*report.Compare"},
	} {
		f, p := windowsFile("")
		f.Command = tc.command
		p.Stopped = tc.stopped
		f.Points = []rawfile.Point{*p}
		r := report.Print(f, report.Judging{RawPath: "out.json"})
		got := ""
		switch v := r.Value.(type) {
		case *report.Measurement:
			got = "*report.Measurement"
			if v.RawFile != "out.json" {
				t.Errorf("%s: raw file %q", tc.command, v.RawFile)
			}
		case *report.Curve:
			got = "*report.Curve"
			if v.RawFile != "out.json" {
				t.Errorf("%s: raw file %q", tc.command, v.RawFile)
			}
		case *report.Compare:
			got = "*report.Compare"
		}
		if got != tc.want || r.Partial != tc.stopped || r.Unusable != nil || r.Text == nil {
			t.Errorf("%s stopped=%v: %s partial=%v unusable=%v, want %s partial=%v", tc.command, tc.stopped, got, r.Partial, r.Unusable, tc.want, tc.stopped)
		}
	}
}
