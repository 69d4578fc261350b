package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/stats"
	"github.com/tickscope/tickscope/internal/sweep"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

func windowsFile(simulated string) (*rawfile.File, *rawfile.Point) {
	key := uint32(1)
	f := &rawfile.File{
		Simulated: simulated,
		Query: &timerinfo.Report{OS: "windows", Windows: &timerinfo.Windows{
			Coarsest100ns: 156250, Finest100ns: 5000, Current100ns: 10000, Version: "10.0.26100",
			Build: 26100, Product: "Windows 11 24H2", GlobalTimerResolutionRequests: &key,
			RequestModel: timerinfo.RequestModelGlobalKey,
		}},
		Method:  "sleep",
		DelayNs: 1_000_000,
	}
	p := &rawfile.Point{
		Requested:  timerinfo.Setting{Resolution100ns: 10000},
		Granted:    timerinfo.Setting{Resolution100ns: 5000},
		Conditions: timerinfo.Conditions{CurrentBefore100ns: 10000, CurrentAfter100ns: 10000, Priority: "high"},
		Latencies:  []int64{1_012_000, 1_011_000, 1_013_000, 999_000, 2_600_000},
	}
	return f, p
}

func TestMeasurementOf(t *testing.T) {
	f, p := windowsFile("")
	m := report.MeasurementOf(f, p)
	if m.Summary.Count != 5 || m.Summary.P50 != 1_012_000 || m.Lateness.P50 != 12_000 {
		t.Errorf("summary %+v lateness %+v", m.Summary, m.Lateness)
	}
	if m.OSBuild != "10.0.26100" || m.Method != "sleep" {
		t.Errorf("identity %q %q", m.OSBuild, m.Method)
	}
	want := []string{"ended before the requested delay", "already at 1.0000 ms", "finer than the 1.0000 ms requested"}
	if len(m.Warnings) != len(want) {
		t.Fatalf("warnings %q, want %d", m.Warnings, len(want))
	}
	for i, w := range want {
		if !strings.Contains(m.Warnings[i], w) {
			t.Errorf("warning %d = %q, want it to mention %q", i, m.Warnings[i], w)
		}
	}
	if p.Latencies[0] != 1_012_000 {
		t.Error("MeasurementOf reordered the point's samples")
	}

	// A grant quantised a little below the request is normal, not another
	// process's request.
	p.Requested, p.Granted = timerinfo.Setting{Resolution100ns: 5000}, timerinfo.Setting{Resolution100ns: 4992}
	for _, w := range report.MeasurementOf(f, p).Warnings {
		if strings.Contains(w, "finer than the") {
			t.Errorf("a quantised grant was flagged: %q", w)
		}
	}
}

func TestWriteMeasurement(t *testing.T) {
	f, p := windowsFile("")
	var out bytes.Buffer
	report.WriteMeasurement(&out, report.MeasurementOf(f, p))
	text := out.String()
	for _, want := range []string{
		"tickscope measure: sleep, 1 ms delay, 5 samples\n",
		"  setting          requested 1.0000 ms (10000 x 100ns), granted 0.5000 ms (5000 x 100ns)\n",
		"period before 1.0000 ms, after 1.0000 ms",
		"  latency          min 0.999  p50 1.012  p90 2.600  p95 2.600  p99 2.600  p99.9 2.600  max 2.600 ms\n",
		"  lateness         p50 +12.0 µs  p99 +1.600 ms",
		"  interference     20.0 % of samples",
		"histogram (ms)\n",
		"warning: ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "SIMULATED") {
		t.Error("a real measurement is marked simulated")
	}
}

func TestSimulatedMarksEveryLine(t *testing.T) {
	f, p := windowsFile("narrow-band")
	var out bytes.Buffer
	report.WriteMeasurement(&out, report.MeasurementOf(f, p))
	for i, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if !strings.HasPrefix(line, "SIMULATED") {
			t.Errorf("line %d is not marked SIMULATED: %q", i+1, line)
		}
	}
}

func TestWriteQueryWindows(t *testing.T) {
	f, _ := windowsFile("")
	f.Query.Warnings = []string{"the timer is held"}
	var out bytes.Buffer
	report.WriteQuery(&out, f.Query)
	for _, want := range []string{
		"  coarsest         15.6250 ms (156250 x 100ns)\n",
		"  finest           0.5000 ms (5000 x 100ns)\n",
		"  request model    global: GlobalTimerResolutionRequests=1 on Windows 11 / Server 2022+ (this is Windows 11 24H2)\n",
		"  global key       GlobalTimerResolutionRequests 1\n",
		"  user presence    DisableUserPresenceQos absent\n",
		"warning: the timer is held\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestWriteQueryLinux(t *testing.T) {
	var out bytes.Buffer
	report.WriteQuery(&out, &timerinfo.Report{OS: "linux", Arch: "amd64", CPUs: 2, Linux: &timerinfo.Linux{
		KernelRelease: "6.1.0", HZ: 250, HighResTimers: "yes", NoHZ: "idle", TimerSlackNs: 50000,
		CPUDMALatencyErr: "open /dev/cpu_dma_latency: permission denied",
		CPUIdleStates:    []timerinfo.CPUIdleState{{Name: "C1", ExitLatencyUs: 2, Description: "MWAIT 0x00"}},
	}})
	for _, want := range []string{
		"  HZ               250 (tick 4ms, from CLOCK_MONOTONIC_COARSE)\n",
		"  NO_HZ            idle (kernel config not readable)\n",
		"  timer slack      50µs (this thread)\n",
		"  cpu_dma_latency  unknown (open /dev/cpu_dma_latency: permission denied)\n",
		"C1         exit latency    2 µs  MWAIT 0x00",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestVsFloor(t *testing.T) {
	row := func(req uint32, p50 int64) sweep.Row {
		return sweep.Row{Requested: req, Granted: req, Pass: true, Confirmed: true, Summary: stats.Summary{Count: 200, P50: p50, Min: p50, P95: p50, Max: p50}}
	}
	for _, tt := range []struct {
		name string
		rows []sweep.Row
		band []int // the recommended band's rows; the recommendation is its middle
		want string
	}{
		{"floor inside the band", []sweep.Row{row(5000, 1_010_000), row(5010, 1_005_000), row(5020, 1_012_000)}, []int{0, 1, 2},
			"p50 1.010 ms at 0.5000 ms  (the floor is inside the recommended band)"},
		{"faster than the floor", []sweep.Row{row(5000, 1_250_000), row(5010, 1_000_000), row(5020, 1_000_000), row(5030, 1_000_000)}, []int{1, 2, 3},
			"p50 1.250 ms at 0.5000 ms  (20% lower)"},
		{"a power pick slower than the floor", []sweep.Row{row(5000, 1_000_000), row(10000, 1_100_000)}, []int{1},
			"p50 1.000 ms at 0.5000 ms  (10% higher)"},
		{"within rounding of the floor", []sweep.Row{row(5000, 1_000_000), row(10000, 1_004_000)}, []int{1},
			"p50 1.000 ms at 0.5000 ms  (the same p50)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &sweep.Result{Rows: tt.rows, Bands: []sweep.Band{{LoGranted: tt.rows[tt.band[0]].Granted, HiGranted: tt.rows[tt.band[len(tt.band)-1]].Granted, Rows: tt.band, Pass: true}},
				Recommended: tt.band[(len(tt.band)-1)/2], Band: 0, Floor: 0, Stability: sweep.NotRechecked}
			if tt.band[0] != 0 {
				r.Bands = append([]sweep.Band{{Rows: []int{0}, Pass: true}}, r.Bands...)
				r.Band = 1
			}
			var out bytes.Buffer
			report.WriteBench(&out, &report.Bench{Result: r}, false)
			var got string
			for _, line := range strings.Split(out.String(), "\n") {
				if v, ok := strings.CutPrefix(line, "  vs floor"); ok {
					got = strings.TrimSpace(v)
				}
			}
			if got != tt.want {
				t.Errorf("vs floor %q, want %q\n%s", got, tt.want, out.String())
			}
		})
	}
}

// The renderer prints what it is given: the next step names commands that
// exist, with no promise of later work.
func TestSlackBenchNextStep(t *testing.T) {
	zero := int32(0)
	r := &sweep.SlackResult{Rows: []sweep.SlackRow{{Setting: timerinfo.Setting{SlackNs: 1, CPUDMALatencyUs: &zero}, Pass: true}}, Recommended: 0, Stability: sweep.Stable}
	var out bytes.Buffer
	report.WriteSlackBench(&out, &report.SlackBench{Method: "clock-abs", DelayNs: 1_000_000, Result: r})
	want := "  next step        tickscope run --slack 1ns -- PROGRAM   and   tickscope apply --dma-latency 0\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("got\n%s\nwant a line %q", out.String(), want)
	}
}

// Dawson's rule's discards and the equivalent bands are shown, not only
// judged.
func TestBenchShowsDiscardsAndEquivalence(t *testing.T) {
	row := func(req uint32, p50 int64) sweep.Row {
		return sweep.Row{Requested: req, Granted: req, Pass: true, Confirmed: true, Summary: stats.Summary{Count: 200, P50: p50, Min: p50, P95: p50, Max: p50}}
	}
	r := &sweep.Result{
		Rows: []sweep.Row{row(5100, 1_012_000), row(5101, 1_012_000), row(5200, 1_008_000), row(5201, 1_008_000)},
		Bands: []sweep.Band{
			{LoGranted: 5100, HiGranted: 5101, Rows: []int{0, 1}, P50: 1_012_000, Pass: true, Equivalent: true},
			{LoGranted: 5200, HiGranted: 5201, Rows: []int{2, 3}, P50: 1_008_000, Pass: true, Equivalent: true},
		},
		Recommended: 2, Band: 1, Floor: 0, Stability: sweep.Stable,
		Discarded:    &sweep.Discards{Points: 7, Samples: 140, PeriodsSeen: []uint32{5000}},
		NoticeableNs: 10_080,
		Confidence: &sweep.Confidence{Method: sweep.IntervalMethod, RunnerUp: 0,
			P50:       stats.Interval{Estimate: 1_008_000, Lo: 1_007_800, Hi: 1_008_100},
			P99:       stats.Interval{Estimate: 1_008_000, Lo: 1_008_000, Hi: 1_009_000},
			MarginP50: &stats.Interval{Estimate: 4_000, Lo: 3_800, Hi: 4_200},
			MarginP99: &stats.Interval{Estimate: 4_000, Lo: 3_100, Hi: 4_900}},
	}
	var out bytes.Buffer
	report.WriteBench(&out, &report.Bench{Current100ns: 156250, Result: r}, false)
	for _, want := range []string{
		"  discarded        7 points (140 samples) measured while the timer period was not the 15.6250 ms the sweep began with (seen 0.5000 ms): evidence for no band, left out\n",
		"  0.5100 - 0.5101 ms   p50 1.012 ms     2 points  (equivalent)\n",
		"  0.5200 - 0.5201 ms   p50 1.008 ms     2 points  <- recommended (equivalent)\n",
		"  2 bands equivalent: each one's p50 minus the lowest has a 95 % interval reaching below 10.08 µs (1 % of that p50), so none is noticeably slower;",
		"  p50              1.0080 ms  (95 % CI 1.0078 .. 1.0081 ms)\n",
		"  runner-up        0.5100 ms, the middle of the 0.5100 - 0.5101 ms band\n",
		"                   its p50 +4.0 µs (95 % CI +3.8 .. +4.2 µs), p99 +4.0 µs (95 % CI +3.1 .. +4.9 µs) against the recommendation\n",
		"  intervals        " + sweep.IntervalMethod + "\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	r.Discarded, r.Bands[0].Equivalent, r.Bands[1].Equivalent = nil, false, false
	out.Reset()
	report.WriteBench(&out, &report.Bench{Current100ns: 156250, Result: r}, false)
	if strings.Contains(out.String(), "discarded") || strings.Contains(out.String(), "(equivalent)") || strings.Contains(out.String(), "bands equivalent:") {
		t.Errorf("an undisturbed run without equivalent bands mentions them:\n%s", out.String())
	}
}

func TestSlackBenchShowsEquivalence(t *testing.T) {
	zero := int32(0)
	first := 0
	r := &sweep.SlackResult{Preferences: sweep.DefaultPreferences(), Rows: []sweep.SlackRow{
		{Setting: timerinfo.Setting{SlackNs: 1, CPUDMALatencyUs: &zero}, Pass: true, Equivalent: true},
		{Setting: timerinfo.Setting{SlackNs: 2000, CPUDMALatencyUs: &zero}, Pass: true, Equivalent: true,
			P50VsBest: &stats.Interval{Estimate: -900, Lo: -2_300, Hi: 500}},
		{Setting: timerinfo.Setting{SlackNs: 5000, CPUDMALatencyUs: &zero}, Pass: true, DominatedBy: &first},
	}, Recommended: 0, Stability: sweep.Stable, NoticeableNs: 1_315,
		Confidence: &sweep.Confidence{Method: sweep.IntervalMethod, RunnerUp: 1, Candidates: 3,
			P50:       stats.Interval{Estimate: 1_027_200, Lo: 1_026_400, Hi: 1_028_100},
			P99:       stats.Interval{Estimate: 1_091_800, Lo: 1_085_000, Hi: 1_140_000, OneSided: true},
			MarginP50: &stats.Interval{Estimate: -900, Lo: -2_300, Hi: 500},
			MarginP99: &stats.Interval{Estimate: 481_700, Lo: 300_000, Hi: 2_800_000, Unbounded: true}}}
	var out bytes.Buffer
	report.WriteSlackBench(&out, &report.SlackBench{Method: "clock-abs", DelayNs: 1_000_000, Result: r})
	for _, want := range []string{
		"<- recommended (equivalent)\n",
		"  (equivalent: p50 -0.9 µs, 95 % CI -2.3 .. +0.5 µs)\n",
		"  (dominated: slack 1ns, cpu_dma_latency 0 µs has a lower p50 beyond the noise and a lower p99)\n",
		"  2 settings equivalent: each one's p50 minus the lowest has a 95 % interval reaching below 1.315 µs (5 % of that p50's lateness), so none is noticeably slower;",
		"  p50              +27.2 µs  (95 % CI +26.4 .. +28.1 µs)\n",
		"  p99              +91.8 µs  (95 % one-sided: at least +85.0 µs; too few samples to bound it above)\n",
		"  runner-up        slack 2µs, cpu_dma_latency 0 µs\n",
		"widened for the 3 candidates the pick was chosen among (Bonferroni)",
		"                   its p50 -0.9 µs (95 % CI -2.3 .. +0.5 µs), p99 +481.7 µs (no 95 % interval: too few samples to bound it) against the recommendation\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
