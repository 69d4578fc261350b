package report_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// A result measured under --load says so, in its text and its JSON, and
// one measured without says nothing of a load: measure, both benches and
// compare, as they print and as analyze prints their files.
func TestResultsSayTheLoad(t *testing.T) {
	measure, p := windowsFile("")
	measure.Command, measure.Points = "measure", []rawfile.Point{*p}
	winBench, p := windowsFile("")
	winBench.Command, winBench.Bench, winBench.Points = "bench", &rawfile.BenchParams{Samples: 20, Requests: 1}, []rawfile.Point{*p}
	linuxBench := &rawfile.File{Command: "bench", Method: "clock-abs", DelayNs: 1_000_000, Bench: &rawfile.BenchParams{Samples: 20, Requests: 1},
		Query:  &timerinfo.Report{OS: "linux", Linux: &timerinfo.Linux{}},
		Points: []rawfile.Point{{Requested: timerinfo.Setting{SlackNs: 1}, Granted: timerinfo.Setting{SlackNs: 1}, Latencies: []int64{1_050_000, 1_060_000, 1_055_000}}}}
	compare := compareFile([]string{"clock-abs"}, []int64{0}, 1_000_000)
	for _, f := range []*rawfile.File{measure, winBench, linuxBench, compare} {
		f.Query.CPUs = 2
		without := report.Print(f, report.Judging{})
		var text bytes.Buffer
		without.Text(&text)
		data, _ := json.Marshal(without.Value)
		if strings.Contains(text.String(), "load") || strings.Contains(string(data), `"load"`) {
			t.Errorf("%s without a load names one:\n%s\n%s", f.Command, text.String(), data)
		}

		f.Load = &rawfile.Load{Threads: 2, Kind: rawfile.LoadCPU}
		with := report.Print(f, report.Judging{})
		text.Reset()
		with.Text(&text)
		const line = "  load             2 busy threads (a CPU-bound loop each, unpinned) ran throughout, on 2 CPUs"
		if !strings.Contains(text.String(), line+"\n") {
			t.Errorf("%s under load does not say so in its text:\n%s", f.Command, text.String())
		}
		data, _ = json.Marshal(with.Value)
		if want := `"load":{"threads":2,"kind":"cpu","cpus":2}`; !strings.Contains(string(data), want) {
			t.Errorf("%s under load: its JSON lacks %s:\n%s", f.Command, want, data)
		}
	}
}

func TestLoadText(t *testing.T) {
	for _, tc := range []struct {
		load report.Load
		want string
	}{
		{report.Load{Threads: 1, Kind: "cpu", CPUs: 2}, "1 busy thread (a CPU-bound loop each, unpinned) ran throughout, on 2 CPUs"},
		{report.Load{Threads: 8, Kind: "cpu", CPUs: 2}, "8 busy threads (a CPU-bound loop each, unpinned) ran throughout, on 2 CPUs"},
	} {
		if got := tc.load.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.load, got, tc.want)
		}
	}
}
