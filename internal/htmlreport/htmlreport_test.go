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
