package rawfile_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/machine"
	"github.com/tickscope/tickscope/internal/measure"
	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/sweep"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// TestLimitsAreTheCommandsMaxima holds the reader's limits to what the
// commands can write: a limit below a command's maximum would refuse a
// real file, one far above would let a hostile file cost more than the
// largest real one.
func TestLimitsAreTheCommandsMaxima(t *testing.T) {
	if sample.MaxSamples != rawfile.MaxMeasureSamples || rawfile.MaxMeasureSamples != rawfile.MaxSamplesPerPoint {
		t.Errorf("measure's maximum is %d samples; the reader allows %d per measure point, %d per point",
			sample.MaxSamples, rawfile.MaxMeasureSamples, rawfile.MaxSamplesPerPoint)
	}
	// Every --load the command line allows here, a file of this machine
	// holds, and none more.
	cpus := runtime.NumCPU()
	if err := options.Load(options.MaxLoadPerCPU*cpus, cpus, true, ""); err != nil {
		t.Errorf("--load %d refused on %d CPUs: %v", options.MaxLoadPerCPU*cpus, cpus, err)
	}
	if options.Load(options.MaxLoadPerCPU*cpus+1, cpus, true, "") == nil {
		t.Errorf("--load %d accepted on %d CPUs", options.MaxLoadPerCPU*cpus+1, cpus)
	}
	for threads, ok := range map[int]bool{options.MaxLoadPerCPU * cpus: true, options.MaxLoadPerCPU*cpus + 1: false} {
		f := &rawfile.File{Tool: rawfile.Tool{Name: rawfile.ToolName}, Created: time.Now(), Command: "measure", Method: "clock-abs", DelayNs: 1e6,
			Query: &timerinfo.Report{OS: "linux", Arch: "amd64", CPUs: cpus, Linux: &timerinfo.Linux{}}, Load: &rawfile.Load{Threads: threads, Kind: rawfile.LoadCPU},
			Points: []rawfile.Point{{Latencies: []int64{1e6}}}}
		if err := f.Validate(rawfile.Known); (err == nil) != ok {
			t.Errorf("a file of %d CPUs with a load of %d threads: %v", cpus, threads, err)
		}
	}
	host := machine.Host()
	if _, err := measure.Curve(host, "here", "", time.Microsecond, rawfile.MaxCurvePoints*time.Microsecond, time.Microsecond, 1); err != nil {
		t.Errorf("curve refuses the %d delays the reader allows: %v", rawfile.MaxCurvePoints, err)
	}
	if _, err := measure.Curve(host, "here", "", time.Microsecond, (rawfile.MaxCurvePoints+1)*time.Microsecond, time.Microsecond, 1); err == nil {
		t.Errorf("curve measures %d delays; the reader allows %d", rawfile.MaxCurvePoints+1, rawfile.MaxCurvePoints)
	}
	if _, err := measure.Curve(host, "here", "", time.Millisecond, 2*time.Millisecond, time.Millisecond, rawfile.MaxCurveSamples); err != nil {
		t.Errorf("curve refuses %d samples: %v", rawfile.MaxCurveSamples, err)
	}
	if _, err := measure.Curve(host, "here", "", time.Millisecond, 2*time.Millisecond, time.Millisecond, rawfile.MaxCurveSamples+1); err == nil {
		t.Errorf("curve takes %d samples; the reader allows %d", rawfile.MaxCurveSamples+1, rawfile.MaxCurveSamples)
	}
	if n := len(host.Methods()); n > rawfile.MaxCompareMethods {
		t.Errorf("this host offers %d methods; a compare file may hold %d", n, rawfile.MaxCompareMethods)
	}
	// The methods a file of this OS may name are exactly this host's, each
	// periodic as its schedule is; the model's are among Windows's.
	if want := rawfile.Methods[runtime.GOOS]; want != nil {
		for _, m := range host.Methods() {
			if periodic, ok := want[m.Name]; !ok || periodic != (m.Schedule == seam.Periodic) {
				t.Errorf("method %s (periodic %v) is not the reader's (%v, known %v)", m.Name, m.Schedule == seam.Periodic, periodic, ok)
			}
		}
		if len(host.Methods()) != len(want) {
			t.Errorf("this host offers %d methods; the reader knows %d for %s", len(host.Methods()), len(want), runtime.GOOS)
		}
	}
	for _, sc := range sim.Scenarios() {
		model := sim.NewHostFor(sc, 1)
		for _, m := range model.Methods() {
			if periodic, ok := rawfile.Methods["windows"][m.Name]; !ok || periodic != (m.Schedule == seam.Periodic) {
				t.Errorf("the model's method %s is not one of Windows's in the reader", m.Name)
			}
		}
	}
	windows := &timerinfo.Report{OS: "windows", Windows: &timerinfo.Windows{Finest100ns: 5000, Coarsest100ns: 156250}}
	linux := &timerinfo.Report{OS: "linux", Linux: &timerinfo.Linux{Root: true}}
	for _, q := range []*timerinfo.Report{windows, linux} {
		if n := len(measure.CompareSettings(q)); n > rawfile.MaxCompareSettings {
			t.Errorf("compare offers %d settings on %s; a compare file may hold %d", n, q.OS, rawfile.MaxCompareSettings)
		}
	}
	if q, err := host.Query(); err == nil {
		if _, err := measure.Compare(host, q, time.Millisecond, rawfile.MaxCompareCycles, "", ""); err != nil {
			t.Errorf("compare refuses --cycles %d: %v", rawfile.MaxCompareCycles, err)
		}
		if _, err := measure.Compare(host, q, time.Millisecond, rawfile.MaxCompareCycles+1, "", ""); err == nil {
			t.Errorf("compare takes --cycles %d; the reader allows %d", rawfile.MaxCompareCycles+1, rawfile.MaxCompareCycles)
		}
	}
	// The widest Windows grid a file's periods allow (100 ns .. 1 s), and
	// the Linux grid with the cpu_dma_latency row.
	if n := len(sweep.Grid(1, 10_000_000, 1, 10_000_000)); n > rawfile.MaxBenchRequests {
		t.Errorf("the widest bench grid holds %d requests; the reader allows %d", n, rawfile.MaxBenchRequests)
	}
	if n := len(sweep.SlackGrid(true)); n > rawfile.MaxBenchRequests {
		t.Errorf("the Linux bench grid holds %d settings; the reader allows %d", n, rawfile.MaxBenchRequests)
	}
	for _, total := range []int{
		rawfile.MaxMeasureSamples,
		rawfile.MaxCurvePoints * rawfile.MaxCurveSamples,
		rawfile.MaxCompareMethods * rawfile.MaxCompareSettings * rawfile.MaxCompareCycles,
		rawfile.MaxPoints * rawfile.MaxBenchSamples,
	} {
		if total > rawfile.MaxTotalSamples {
			t.Errorf("a command writes %d samples; the reader allows %d", total, rawfile.MaxTotalSamples)
		}
	}
	for _, points := range []int{1, rawfile.MaxCurvePoints, rawfile.MaxCompareMethods * rawfile.MaxCompareSettings, rawfile.MaxBenchRequests + rawfile.MaxRecheckPoints} {
		if points > rawfile.MaxPoints {
			t.Errorf("a command writes %d points; the reader allows %d", points, rawfile.MaxPoints)
		}
	}
}

// rawText is a raw file as text: the good measure file's header with
// command and points replaced, its points written by points (which gets
// the buffer to append to). Text, because files at the limits hold
// millions of samples that a map would take seconds to build.
func rawText(t *testing.T, command string, edit func(m map[string]any), points func(b *bytes.Buffer)) []byte {
	t.Helper()
	head := encode(t, func(m map[string]any) {
		m["command"] = command
		m["points"] = "POINTS"
		if edit != nil {
			edit(m)
		}
	})
	before, after, ok := bytes.Cut(head, []byte(`"POINTS"`))
	if !ok {
		t.Fatal("no points placeholder")
	}
	var b bytes.Buffer
	b.Write(before)
	b.WriteByte('[')
	points(&b)
	b.WriteByte(']')
	b.Write(after)
	return b.Bytes()
}

// writePoint appends a point of n samples of latency, with a setting
// (JSON: requested and granted) and any other fields (JSON, "" for none).
func writePoint(b *bytes.Buffer, setting, fields string, n int, latency int64) {
	if b.Bytes()[b.Len()-1] != '[' {
		b.WriteByte(',')
	}
	b.WriteString(`{"requested":` + setting + `,"granted":` + setting + `,"conditions":{"priority":"x"},"warmup_discarded":0,"overruns":0`)
	if fields != "" {
		b.WriteString("," + fields)
	}
	b.WriteString(`,"latencies_ns":[`)
	text := strconv.FormatInt(latency, 10)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(text)
	}
	b.WriteString("]}")
}

// slack is a Linux setting of ns of timer slack (0: none).
func slack(ns int) string {
	if ns == 0 {
		return "{}"
	}
	return fmt.Sprintf(`{"slack_ns":%d}`, ns)
}

// windowsMethods are Windows's wait methods, in order: a full compare
// measures all 12.
func windowsMethods() []string {
	names := make([]string, 0, len(rawfile.Methods["windows"]))
	for name := range rawfile.Methods["windows"] {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// compareText is a Windows compare file of methods × settings points of n
// samples, and extra more points of one sample: the largest compare is
// Windows's, with 12 methods and 4 settings. Methods past Windows's 12
// are named extraN.
func compareText(t *testing.T, methods, settings, n, extra int, latency int64) []byte {
	names := windowsMethods()
	return rawText(t, "compare", func(m map[string]any) {
		m["method"] = rawfile.PerPointMethod
		m["query"] = map[string]any{"os": "windows", "arch": "amd64", "cpus": 8, "warnings": []any{},
			"windows": map[string]any{"coarsest_100ns": 156250, "finest_100ns": 5000, "current_100ns": 156250}}
	}, func(b *bytes.Buffer) {
		point := func(method string, si, n int) {
			setting := "{}"
			if si > 0 {
				setting = fmt.Sprintf(`{"resolution_100ns":%d}`, si*1000)
			}
			fields := `"method":"` + method + `"`
			if rawfile.Methods["windows"][method] {
				fields += `,"periodic":true`
			}
			writePoint(b, setting, fields, n, latency)
		}
		for mi := range methods {
			method := fmt.Sprintf("extra%d", mi)
			if mi < len(names) {
				method = names[mi]
			}
			for si := range settings {
				point(method, si, n)
			}
		}
		for i := range extra {
			point(fmt.Sprintf("extra%d", i), 0, 1)
		}
	})
}

func benchText(t *testing.T, samples, requests, points, n int) []byte {
	return rawText(t, "bench", func(m map[string]any) {
		m["bench"] = map[string]any{"samples": samples, "exhaustive": false, "seed": 1, "requests": requests}
	}, func(b *bytes.Buffer) {
		for i := range points {
			writePoint(b, slack(i+1), "", n, 1_000_000)
		}
	})
}

func curveText(t *testing.T, points, n int) []byte {
	return rawText(t, "curve", nil, func(b *bytes.Buffer) {
		for i := range points {
			writePoint(b, "{}", fmt.Sprintf(`"delay_ns":%d`, 1000*(i+1)), n, 1_000_000)
		}
	})
}

func measureText(t *testing.T, n int, latency int64) []byte {
	return rawText(t, "measure", nil, func(b *bytes.Buffer) { writePoint(b, "{}", "", n, latency) })
}

func warningsText(t *testing.T, count, length int) []byte {
	return encode(t, func(m map[string]any) {
		w := make([]any, count)
		for i := range w {
			w[i] = strings.Repeat("w", length)
		}
		m["query"].(map[string]any)["warnings"] = w
	})
}

// TestEachLimitPlusOne feeds each documented limit (accepted) and the
// limit plus one (refused, saying which limit).
func TestEachLimitPlusOne(t *testing.T) {
	tests := []struct {
		name          string
		atLimit, over []byte
		want          string
	}{
		{"samples in a measure point", measureText(t, rawfile.MaxMeasureSamples, 1e6), measureText(t, rawfile.MaxMeasureSamples+1, 1e6),
			"points[0].latencies_ns: more than 100000 samples in one point"},
		{"latency", measureText(t, 1, rawfile.MaxLatencyNs), measureText(t, 1, rawfile.MaxLatencyNs+1), "points[0].latencies_ns[0]: 60000000001 ns is absurd"},
		{"curve points", curveText(t, rawfile.MaxCurvePoints, 1), curveText(t, rawfile.MaxCurvePoints+1, 1), "points: 1001 is over the limit of 1000 for a curve file"},
		{"curve samples", curveText(t, 1, rawfile.MaxCurveSamples), curveText(t, 1, rawfile.MaxCurveSamples+1), "points[0].latencies_ns: 1001 samples is over the limit of 1000 for a curve file"},
		{"compare methods", compareText(t, rawfile.MaxCompareMethods, 1, 1, 0, 1e6), compareText(t, rawfile.MaxCompareMethods+1, 1, 1, 0, 1e6),
			`points[12].method: "extra12" is the 13th method; a compare file holds at most 12`},
		{"compare settings", compareText(t, 1, rawfile.MaxCompareSettings, 1, 0, 1e6), compareText(t, 1, rawfile.MaxCompareSettings+1, 1, 0, 1e6),
			"points[4].requested: 0.4000 ms (4000 x 100ns) is the 5th setting; a compare file holds at most 4"},
		{"compare cycles", compareText(t, 1, 1, rawfile.MaxCompareCycles, 0, 1e6), compareText(t, 1, 1, rawfile.MaxCompareCycles+1, 0, 1e6),
			"points[0].latencies_ns: more than 100000 samples in one point"},
		{"bench samples", benchText(t, rawfile.MaxBenchSamples, 1, 1, 1), benchText(t, rawfile.MaxBenchSamples+1, 1, 1, 1), "bench.samples: 1001 is outside 20..1000"},
		{"bench requests", benchText(t, 20, rawfile.MaxBenchRequests, 1, 1), benchText(t, 20, rawfile.MaxBenchRequests+1, 1, 1), "bench.requests: 2001 is outside 1..2000"},
		{"bench points", benchText(t, 20, 10, 10+rawfile.MaxRecheckPoints, 1), benchText(t, 20, 10, 10+rawfile.MaxRecheckPoints+1, 1),
			"points: 15 is over the 14 a bench of 10 requests writes"},
		{"bench point samples", benchText(t, 20, 1, 1, 20), benchText(t, 20, 1, 1, 21), "points[0].latencies_ns: 21 samples is over the limit of 20 for a bench file"},
		{"points", benchText(t, 20, rawfile.MaxBenchRequests, rawfile.MaxPoints, 1), benchText(t, 20, rawfile.MaxBenchRequests, rawfile.MaxPoints+1, 1),
			"points: more than 2004 points"},
		{"string length", warningsText(t, 1, rawfile.MaxStringBytes), warningsText(t, 1, rawfile.MaxStringBytes+1), "query.warnings[0]: a string over 4096 bytes"},
		{"list length", warningsText(t, rawfile.MaxListLength, 1), warningsText(t, rawfile.MaxListLength+1, 1), "query.warnings: more than 2000 entries"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := rawfile.Parse(tt.atLimit); err != nil {
				t.Errorf("a file at the limit was refused: %v", err)
			}
			_, err := rawfile.Parse(tt.over)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("a file one past the limit: got %v, want %q", err, tt.want)
			}
		})
	}
}

// TestLargestFiles: the largest file a real run writes (a full compare,
// every sample 60 s long) fits MaxFileBytes and is read; one sample more
// in all, or one byte more, is refused.
func TestLargestFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds files of 58 MB")
	}
	largest := compareText(t, rawfile.MaxCompareMethods, rawfile.MaxCompareSettings, rawfile.MaxCompareCycles, 0, rawfile.MaxLatencyNs)
	if len(largest) > rawfile.MaxFileBytes {
		t.Fatalf("the largest real file is %d bytes, over MaxFileBytes %d", len(largest), rawfile.MaxFileBytes)
	}
	t.Logf("the largest real file is %d bytes (limit %d)", len(largest), rawfile.MaxFileBytes)
	if _, err := rawfile.Parse(largest); err != nil {
		t.Fatalf("the largest real file was refused: %v", err)
	}
	largest = nil
	over := compareText(t, rawfile.MaxCompareMethods, rawfile.MaxCompareSettings, rawfile.MaxCompareCycles, 1, 1e6)
	if _, err := rawfile.Parse(over); err == nil || !strings.Contains(err.Error(), "more than 4800000 samples in all") {
		t.Errorf("one sample over MaxTotalSamples: %v", err)
	}
	if _, err := rawfile.Parse(make([]byte, rawfile.MaxFileBytes+1)); err == nil || !strings.Contains(err.Error(), "over the size limit") {
		t.Errorf("a document of MaxFileBytes+1: %v", err)
	}
	// A file of MaxFileBytes+1 is refused before it is read (sparse: it
	// costs no disk).
	path := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(rawfile.MaxFileBytes + 1)
	f.Close()
	if _, err := rawfile.ReadFile(context.Background(), path, rawfile.Known); err == nil || !strings.Contains(err.Error(), "over the size limit") {
		t.Errorf("a file of MaxFileBytes+1: %v", err)
	}
}
