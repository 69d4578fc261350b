package htmlreport

import (
	"bytes"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/stats"
	"github.com/tickscope/tickscope/internal/sweep"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// sweepPeriods are the bench's candidates as it plans them on a machine
// whose periods run from 0.5 to 15.625 ms (100 ns units): every 300 ns
// (the granted quantum) over the first 50 µs, every 5 µs to 1 ms, every
// 50 µs to 2 ms, every 1 ms to the coarsest.
func sweepPeriods() []uint32 {
	var out []uint32
	for v := uint32(5000); v < 5500; v += 3 {
		out = append(out, v)
	}
	for v := uint32(5500); v < 10000; v += 50 {
		out = append(out, v)
	}
	for v := uint32(10000); v < 20000; v += 500 {
		out = append(out, v)
	}
	for v := uint32(20000); v < 156250; v += 10000 {
		out = append(out, v)
	}
	return append(out, 156250)
}

// narrowBand is a result shaped as the model's narrow-band scenario: the
// waits take three ticks (1.5 ms) except in a fast band 0.5107–0.5132 ms
// (two ticks, 1.02 ms), and from 1.05 ms up one period and a bit. pick is
// the recommended period; the bands are cut where p50 changes.
func narrowBand(pick uint32) *sweep.Result {
	r := &sweep.Result{Recommended: -1, Band: -1, Floor: 0}
	p50Of := func(v uint32) int64 {
		switch {
		case v >= 5107 && v <= 5132:
			return 1_024_000
		case v < 10500:
			return 1_500_000
		}
		return int64(v) * 100
	}
	for i, v := range sweepPeriods() {
		p50 := p50Of(v)
		r.Rows = append(r.Rows, sweep.Row{Requested: v, Granted: v, Pass: true,
			Summary: stats.Summary{P5: p50 - 1000, P50: p50, P95: p50 + 2000, P99: p50 + 3000, Max: p50 + 500_000}})
		if n := len(r.Bands); n > 0 && r.Bands[n-1].P50 == p50 {
			r.Bands[n-1].Rows = append(r.Bands[n-1].Rows, i)
			r.Bands[n-1].HiGranted = v
		} else {
			r.Bands = append(r.Bands, sweep.Band{LoGranted: v, HiGranted: v, Rows: []int{i}, P50: p50, Pass: true})
		}
		if v == pick {
			r.Recommended, r.Band = i, len(r.Bands)-1
		}
	}
	if pick != 0 && r.Recommended < 0 {
		panic("narrowBand: the pick is not a candidate period")
	}
	return r
}

func TestBenchView(t *testing.T) {
	for _, tc := range []struct {
		name   string
		result func() *sweep.Result
		zoomed bool
		// The view ends past pastMS and before beforeMS.
		pastMS, beforeMS float64
	}{
		{"the latency pick in a narrow band", func() *sweep.Result { return narrowBand(5111) }, true, 0.5132, 0.52},
		{"the power pick", func() *sweep.Result { return narrowBand(13000) }, true, 1.3, 2},
		{"the pick in the floor's band", func() *sweep.Result { return narrowBand(5003) }, true, 0.5105, 0.52},
		{"nothing recommended: the floor's band", func() *sweep.Result { return narrowBand(0) }, true, 0.5105, 0.52},
		{"the pick past most of the range: all of it", func() *sweep.Result { return narrowBand(140000) }, false, 15.62, 15.63},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.result()
			_, periods, pos := sortedRows(r)
			v := viewOf(r, periods, pos)
			if v.zoomed != tc.zoomed || v.lo != 0.5 || v.hi <= tc.pastMS || v.hi >= tc.beforeMS {
				t.Errorf("view %+v, want zoomed %v from 0.5 ms to between %v and %v ms", v, tc.zoomed, tc.pastMS, tc.beforeMS)
			}
		})
	}
}

// sortedRows is bench's ordering of a result's rows by the period requested.
func sortedRows(r *sweep.Result) ([]int, []float64, map[int]int) {
	order := make([]int, len(r.Rows))
	periods := make([]float64, len(r.Rows))
	pos := map[int]int{}
	for i := range r.Rows {
		order[i], periods[i], pos[i] = i, period(r.Rows[i].Requested), i
	}
	return order, periods, pos
}

// The knees and the pick are spread over the chart: the band that decides
// (the floor to the end of the pick's band) spans at least a third of the
// plot's width, and the floor, the first knee (where the fast band
// starts), the pick and the second knee (where it ends) are each at least
// a twentieth of the width apart. On one linear axis over the whole range
// the band that decides is 0.1 % of the width.
func TestBenchChartSpreadsTheDecision(t *testing.T) {
	r := narrowBand(5120)
	order, periods, pos := sortedRows(r)
	c := benchChart(r, order, periods, pos, viewOf(r, periods, pos))
	floor, knee1, pick, knee2 := c.fx(0.5), c.fx(0.5107), c.fx(0.5120), c.fx(0.5135)
	if span := c.fx(0.5132) - floor; span < 1.0/3 {
		t.Errorf("the band that decides spans %.1f %% of the width, want at least a third", span*100)
	}
	xs := []float64{floor, knee1, pick, knee2}
	for i := 1; i < len(xs); i++ {
		if xs[i]-xs[i-1] < 0.05 {
			t.Errorf("positions %.3f (floor, knee, pick, knee) are not spread out: %.3f and %.3f are within a twentieth", xs, xs[i-1], xs[i])
		}
	}
	for _, x := range xs {
		if x < 0 || x > 1 {
			t.Errorf("position %.3f is off the plot", x)
		}
	}
	whole := newChart("", "", "", periods[0], periods[len(periods)-1], 0, 1, false)
	if span := whole.fx(0.5132) - whole.fx(0.5); span > 0.01 {
		t.Errorf("the whole range gives the band that decides %.2f %% of the width: the test would not tell", span*100)
	}
}

// markX finds the x (a percentage) of the marker whose label is label.
var markX = regexp.MustCompile(`<line x1="([0-9.]+)%" y1="0" x2="[0-9.]+%" y2="[0-9.]+" stroke="[^"]+" stroke-width="2" stroke-dasharray="6 3"/><text x="[0-9.]+%" dx="-?[0-9]+" y="[0-9.]+" class="[^"]+" fill="[^"]+">([^<]+)</text>`)

// The page draws what the chart computed: the pick's and the floor's
// markers far apart, an overview of the whole range with the view's box,
// a drawing that fills the width (no viewBox scaling its text) and the
// numbers table.
func TestBenchPageDrawsTheDecision(t *testing.T) {
	f := measureFile(nil, "narrow-band")
	f.Command, f.Bench = "bench", nil
	var b bytes.Buffer
	if err := Write(&b, f, &report.Bench{Design: "adaptive", Samples: 200, Result: narrowBand(5120)}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	marks := map[string]float64{}
	for _, m := range markX.FindAllStringSubmatch(page, -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		marks[m[2]] = x
	}
	floor, okF := marks["floor 0.5000 ms"]
	pick, okP := marks["pick 0.5120 ms"]
	if !okF || !okP || pick-floor < 100.0/3 {
		t.Errorf("markers %v: want the floor's and the pick's at least a third of the width apart", marks)
	}
	for _, want := range []string{`<svg class="chart" width="100%"`, `<svg class="overview" width="100%"`, `class="win"`, "the band that decides",
		`<meta name="viewport" content="width=device-width, initial-scale=1">`, `<div class="sim">SIMULATED: narrow-band`, `<table class="num">`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, `<svg class="chart" viewBox`) {
		t.Error("the chart scales with a viewBox: its text shrinks on a phone")
	}
}

// The Linux bench draws the slack on a log axis: its decades are ticks,
// and 1 ns, 1 µs and 500 µs are spread over the width, not 1 µs at 0.2 %
// of it as on a linear axis.
func TestSlackChartLogAxis(t *testing.T) {
	zero := int32(0)
	var rows []sweep.SlackRow
	for _, hold := range []*int32{nil, &zero} {
		for _, slack := range []int64{1, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000} {
			p50 := 1_050_000 + slack
			rows = append(rows, sweep.SlackRow{Setting: timerinfo.Setting{SlackNs: slack, CPUDMALatencyUs: hold}, Pass: true,
				Summary:  stats.Summary{P5: p50 - 5000, P50: p50, P95: p50 + 30_000, P99: p50 + 60_000, Max: p50 + 900_000},
				Lateness: stats.Lateness{P50: p50 - 1_000_000, P99: p50 + 60_000 - 1_000_000}})
		}
	}
	c := slackChart(&sweep.SlackResult{Rows: rows, Recommended: 1}, 1_000_000)
	one, micro, most := c.fx(1), c.fx(1000), c.fx(500_000)
	if micro-one < 0.3 || most-micro < 0.3 || one < 0 || most > 1 {
		t.Errorf("1 ns, 1 µs and 500 µs at %.3f, %.3f and %.3f of the width: want each step at least 0.3", one, micro, most)
	}
	if y := c.py(50); c.py(1000) >= y || y >= c.py(5) {
		t.Error("the lateness axis is not ordered")
	}
	drawn := c.String()
	for _, tick := range []string{">1 ns<", ">10 ns<", ">1 µs<", ">100 µs<", ">1 ms<", "pick: slack 1000 ns"} {
		if !strings.Contains(drawn, tick) {
			t.Errorf("the slack chart lacks %q", tick)
		}
	}
}

func TestDecades(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   []float64
	}{
		{0.5, 2e6, []float64{1, 10, 100, 1000, 1e4, 1e5, 1e6}},
		{10, 1000, []float64{10, 100, 1000}},
		{2, 9, nil},
	} {
		got := decades(tc.lo, tc.hi)
		if len(got) != len(tc.want) {
			t.Errorf("decades(%v, %v) = %v, want %v", tc.lo, tc.hi, got, tc.want)
			continue
		}
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-9*tc.want[i] {
				t.Errorf("decades(%v, %v) = %v, want %v", tc.lo, tc.hi, got, tc.want)
			}
		}
	}
}
