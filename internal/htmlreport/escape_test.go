package htmlreport

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/sweep"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// hostile is what a shared raw file could carry in any string tickscope
// prints: it must reach the page as text, never as markup.
const hostile = `<script>alert(1)</script><img src=x onerror=alert(2)>`

// TestPagesEscapeFileStrings draws every page type from a file whose
// strings (method, scenario, OS build, settings) are markup.
func TestPagesEscapeFileStrings(t *testing.T) {
	lat := spread(400)
	linux := &timerinfo.Report{OS: "linux", Arch: "amd64", CPUs: 2, Linux: &timerinfo.Linux{KernelRelease: hostile}}
	windows := &timerinfo.Report{OS: "windows", Arch: "amd64", CPUs: 2, Windows: &timerinfo.Windows{Version: hostile, Product: hostile, Coarsest100ns: 156250, Finest100ns: 5000, Current100ns: 156250}}
	zero := int32(0)
	pages := map[string]func() (*rawfile.File, any){
		"measure": func() (*rawfile.File, any) {
			f := &rawfile.File{Command: "measure", Simulated: hostile, Method: hostile, DelayNs: 1_000_000, Query: windows, Points: []rawfile.Point{{Latencies: lat}}}
			return f, report.MeasurementOf(f, &f.Points[0])
		},
		"Linux bench": func() (*rawfile.File, any) {
			f := &rawfile.File{Command: "bench", Method: hostile, DelayNs: 1_000_000, Query: linux, Bench: &rawfile.BenchParams{Samples: 400, Requests: 2},
				Points: []rawfile.Point{{Requested: timerinfo.Setting{SlackNs: 1}, Latencies: lat}, {Requested: timerinfo.Setting{SlackNs: 1, CPUDMALatencyUs: &zero}, Latencies: lat}}}
			return f, report.SlackBenchOf(f, sweep.JudgeSlackFile(f, sweep.DefaultPreferences()))
		},
		"Windows bench": func() (*rawfile.File, any) {
			f := &rawfile.File{Command: "bench", Simulated: hostile, Method: hostile, DelayNs: 1_000_000, Query: windows, Bench: &rawfile.BenchParams{Samples: 400, Requests: 2},
				Points: []rawfile.Point{{Requested: timerinfo.Setting{Resolution100ns: 5000}, Granted: timerinfo.Setting{Resolution100ns: 5000}, Latencies: lat}, {Requested: timerinfo.Setting{Resolution100ns: 10000}, Granted: timerinfo.Setting{Resolution100ns: 10000}, Latencies: lat}}}
			return f, report.BenchOf(f, sweep.JudgeFile(f, sweep.DefaultPreferences()))
		},
		"curve": func() (*rawfile.File, any) {
			f := &rawfile.File{Command: "curve", Method: hostile, DelayNs: 1_000_000, Query: linux, Points: []rawfile.Point{{DelayNs: 1_000_000, Latencies: lat}, {DelayNs: 2_000_000, Latencies: lat}}}
			return f, report.CurveOf(f, sweep.JudgeCurve(f))
		},
		"compare": func() (*rawfile.File, any) {
			f := &rawfile.File{Command: "compare", Method: "(per point)", DelayNs: 1_000_000, Query: linux, Points: []rawfile.Point{{Method: hostile, Latencies: lat}}}
			return f, report.CompareOf(f, sweep.JudgeCompare(f, nil, nil))
		},
	}
	for name, page := range pages {
		t.Run(name, func(t *testing.T) {
			f, result := page()
			var b bytes.Buffer
			if err := Write(&b, f, result); err != nil {
				t.Fatal(err)
			}
			for _, bad := range []string{"<script", "<img"} {
				if strings.Contains(b.String(), bad) {
					t.Errorf("the %s page carries the file's %q as markup", name, bad)
				}
			}
			if !strings.Contains(b.String(), "&lt;script&gt;") {
				t.Errorf("the %s page does not show the file's string as text", name)
			}
		})
	}
}
