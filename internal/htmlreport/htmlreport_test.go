package htmlreport

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/stats"
	"github.com/tickscope/tickscope/internal/sweep"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

func TestMicrosecondBins(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []int64
		want []Bin
	}{
		{"empty", nil, nil},
		{"truncates and counts", []int64{1999, 1000, 3500, 1001}, []Bin{{1, 3}, {3, 1}}},
		{"unsorted input", []int64{5000, 2000, 5999}, []Bin{{2, 1}, {5, 2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := MicrosecondBins(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("MicrosecondBins(%v) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestNiceTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		n      int
		want   []float64
	}{
		{0, 10, 5, []float64{0, 2, 4, 6, 8, 10}},
		{0.5, 3.2, 6, []float64{0.5, 1, 1.5, 2, 2.5, 3}},
		{5, 5, 4, []float64{5}},
	} {
		if got := niceTicks(tc.lo, tc.hi, tc.n); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("niceTicks(%v, %v, %d) = %v, want %v", tc.lo, tc.hi, tc.n, got, tc.want)
		}
	}
}

func TestWriteRefusesUnknownResults(t *testing.T) {
	if err := Write(&bytes.Buffer{}, measureFile(nil, ""), "not a result"); err == nil {
		t.Error("Write drew a string")
	}
}

func measureFile(latencies []int64, simulated string) *rawfile.File {
	return &rawfile.File{
		Tool: rawfile.Tool{Name: "tickscope", Version: "test"}, Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Command: "measure", Simulated: simulated, Method: "sleep", DelayNs: 1_000_000,
		Query:  &timerinfo.Report{OS: "windows", Arch: "amd64", CPUs: 4, Windows: &timerinfo.Windows{Version: "10.0.26100", Product: "Windows 11 24H2", Coarsest100ns: 156250, Finest100ns: 5000}},
		Points: []rawfile.Point{{Latencies: latencies}},
	}
}

// spread is n latencies over 1..21 ms, most near 2 ms with a tail: nearly
// every 1 µs bin of the range is filled, the worst case for the page.
func spread(n int) []int64 {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]int64, n)
	for i := range out {
		out[i] = 1_000_000 + int64(r.ExpFloat64()*1_000_000)
		if i%50 == 0 {
			out[i] += r.Int64N(20_000_000)
		}
	}
	return out
}

func TestMeasurePage(t *testing.T) {
	f := measureFile(spread(2000), "narrow-band")
	var b bytes.Buffer
	if err := Write(&b, f, report.MeasurementOf(f, &f.Points[0])); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{`<div class="sim">SIMULATED: narrow-band`, "Windows 11 24H2 (10.0.26100)", "2026-01-02T03:04:05Z", "tickscope test",
		"latency (µs)", "samples per 1 µs bin", "latency (ms)", "sample index", "<td>samples</td><td>2000</td>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, bad := range []string{"http:", "https:", "<script", "@font-face", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("the page contains %q", bad)
		}
	}
	if strings.Count(page, `<svg class="chart"`) != 2 {
		t.Error("a measure page has two charts")
	}
}

// A page of a run under --load says so in its header, and one without
// does not.
func TestPageSaysTheLoad(t *testing.T) {
	f := measureFile(spread(200), "")
	var b bytes.Buffer
	if err := Write(&b, f, report.MeasurementOf(f, &f.Points[0])); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "<td>load</td>") {
		t.Error("a page without a load names one")
	}
	f.Load = &rawfile.Load{Threads: 3, Kind: rawfile.LoadCPU}
	b.Reset()
	if err := Write(&b, f, report.MeasurementOf(f, &f.Points[0])); err != nil {
		t.Fatal(err)
	}
	if want := "<tr><td>load</td><td>3 busy threads (a CPU-bound loop each, unpinned) ran throughout, on 4 CPUs</td></tr>"; !strings.Contains(b.String(), want) {
		t.Errorf("the page lacks %s", want)
	}
}

// BenchmarkMeasurePage100k renders the page of a 100,000-sample
// measurement (BENCHMARKS.md: under 2 s and 5 MB).
func BenchmarkMeasurePage100k(b *testing.B) {
	f := measureFile(spread(100_000), "")
	m := report.MeasurementOf(f, &f.Points[0])
	var size int
	for b.Loop() {
		var buf bytes.Buffer
		if err := Write(&buf, f, m); err != nil {
			b.Fatal(err)
		}
		size = buf.Len()
	}
	b.ReportMetric(float64(size), "bytes/page")
}

// The bench pages show what the user acts on with its intervals: the
// pick's p50 and p99 and its margin over the runner-up (Linux: lateness).
func TestBenchPagesShowTheIntervals(t *testing.T) {
	zero := int32(0)
	f := measureFile(nil, "")
	f.Command, f.Bench = "bench", &rawfile.BenchParams{Samples: 200}
	c := &sweep.Confidence{Method: sweep.IntervalMethod, RunnerUp: 1,
		P50:       stats.Interval{Estimate: 1_027_200, Lo: 1_026_400, Hi: 1_028_100},
		P99:       stats.Interval{Estimate: 1_091_800, Lo: 1_085_000, Hi: 1_140_000, OneSided: true},
		MarginP50: &stats.Interval{Estimate: -900, Lo: -2_300, Hi: 500},
		MarginP99: &stats.Interval{Estimate: 481_700, Lo: 300_000, Hi: 2_800_000, Unbounded: true}}
	rows := []sweep.SlackRow{{Setting: timerinfo.Setting{SlackNs: 1, CPUDMALatencyUs: &zero}, Pass: true},
		{Setting: timerinfo.Setting{SlackNs: 2000, CPUDMALatencyUs: &zero}, Pass: true}}
	var b bytes.Buffer
	if err := Body(&b, f, &report.SlackBench{Method: "clock-abs", DelayNs: 1_000_000, Samples: 200,
		Result: &sweep.SlackResult{Rows: rows, Recommended: 0, Confidence: c}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"The pick's lateness: p50 +27.2 µs (95 % CI +26.4 – +28.1), p99 +91.8 µs (95 % one-sided: at least +85.0; too few samples to bound it above).",
		"The runner-up, slack 2000 ns, DMA hold 0 µs, has a p50 -0.9 µs (95 % CI -2.3 – +0.5) and a p99 +481.7 µs (no 95 % interval: too few samples to bound it) against it.",
		"Price and Bonett"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the Linux bench's page lacks %q", want)
		}
	}
	b.Reset()
	winRows := []sweep.Row{{Requested: 5100, Granted: 5100, Pass: true}, {Requested: 5200, Granted: 5200, Pass: true}}
	c.RunnerUp = 0
	if err := Body(&b, f, &report.Bench{Design: "adaptive", Result: &sweep.Result{Rows: winRows, Recommended: 1, Floor: 0, Confidence: c}}); err != nil {
		t.Fatal(err)
	}
	if want := "The pick's latency: p50 1.0272 ms (95 % CI 1.0264 – 1.0281), p99 1.0918 ms (95 % one-sided: at least 1.0850; too few samples to bound it above). The runner-up, 0.5100 ms,"; !strings.Contains(b.String(), want) {
		t.Errorf("the Windows bench's page lacks %q", want)
	}
	// A contaminated sweep says what to do.
	b.Reset()
	if err := Body(&b, f, &report.Bench{Design: "adaptive", Result: &sweep.Result{Rows: winRows, Recommended: 1, Floor: 0, HeldElsewhere: 5000}}); err != nil {
		t.Fatal(err)
	}
	if want := "Another process held 0.5000 ms: the coarser requests measured that period, not their own, and are marked affected; " + sweep.HeldElsewhereAdvice; !strings.Contains(b.String(), want) {
		t.Errorf("the contaminated bench's page lacks %q", want)
	}
}
