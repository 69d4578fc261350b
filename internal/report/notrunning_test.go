package report_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/report"
)

// A sample taken while the process was stopped is left out of measure's
// figures, and the text and the JSON say how many and why.
func TestMeasurementLeavesOutNotRunning(t *testing.T) {
	f, p := windowsFile("")
	p.Latencies = append(p.Latencies, 2_012_208_000)
	p.NotRunning = &rawfile.NotRunning{Samples: []int{5}, Continued: 1}
	m := report.MeasurementOf(f, p)
	if m.Summary.Count != 5 || m.Summary.Max != 2_600_000 {
		t.Errorf("summary counts %d samples, max %d; want the 5 taken while running, max 2.6 ms", m.Summary.Count, m.Summary.Max)
	}
	if nr := m.NotRunning; nr == nil || nr.LeftOut != 1 || nr.Continued != 1 {
		t.Errorf("not running %+v, want 1 left out after 1 continue", nr)
	}
	var text bytes.Buffer
	report.WriteMeasurement(&text, m)
	for _, want := range []string{"5 samples (1 more left out: taken while the process was not running)", "warning: the process was not running while it measured (stopped and continued once): 1 sample was taken then and left out"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if strings.Contains(text.String(), "2012.208") {
		t.Errorf("text shows the stopped sample:\n%s", text.String())
	}
	data, _ := json.Marshal(m)
	if !strings.Contains(string(data), `"not_running":{"left_out":1,"continued":1,"suspended_ns":0}`) {
		t.Errorf("JSON lacks not_running: %s", data)
	}
}
