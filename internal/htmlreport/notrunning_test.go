package htmlreport

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/report"
)

// A measure page leaves the sample taken while the process was stopped
// out of its figures and charts, and says so.
func TestMeasurePageLeavesOutNotRunning(t *testing.T) {
	lat := make([]int64, 100)
	for i := range lat {
		lat[i] = 1_010_000 + int64(i)*10
	}
	lat[40] = 2_012_208_000
	f := measureFile(lat, "")
	f.Points[0].NotRunning = &rawfile.NotRunning{Samples: []int{40}, Continued: 1}
	var b bytes.Buffer
	if err := Write(&b, f, report.MeasurementOf(f, &f.Points[0])); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"warning: the process was not running while it measured (stopped and continued once): 1 sample was taken then and left out", "<td>samples</td><td>99</td>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, "2012.2") {
		t.Error("the page shows the stopped sample")
	}
}
