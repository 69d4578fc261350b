package htmlreport

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/tickscope/tickscope/internal/report"
)

// Display limits. The charts are decimated to what a screen shows; the
// tables and the summary come from every sample.
const (
	// seriesBuckets is how many min–max pairs draw the time series.
	seriesBuckets = 1000
	// histColumns is how many columns draw the histogram: each shows the
	// fullest 1 µs bin that falls in it.
	histColumns = 640
	// histRows caps the histogram table; the --histfile has every bin.
	histRows = 400
)

// Bin is one 1 µs histogram bin: the samples whose latency, truncated to
// whole µs, is Us.
type Bin struct {
	Us    int64
	Count int
}

// MicrosecondBins counts latencies (ns) in 1 µs bins, the non-empty ones
// in order (OSADL's and cyclictest's histograms count whole µs).
func MicrosecondBins(latencies []int64) []Bin {
	us := make([]int64, len(latencies))
	for i, v := range latencies {
		us[i] = v / 1000
	}
	slices.Sort(us)
	var bins []Bin
	for _, v := range us {
		if n := len(bins); n > 0 && bins[n-1].Us == v {
			bins[n-1].Count++
		} else {
			bins = append(bins, Bin{v, 1})
		}
	}
	return bins
}

func (p *page) measurement(m *report.Measurement, latencies []int64) {
	p.warnings(m.Warnings)
	s := m.Summary
	sum := table([]string{"figure", "ms"}, [][]string{
		{"samples", strconv.Itoa(s.Count)}, {"requested delay", fms(m.DelayNs)},
		{"min", fms(s.Min)}, {"p50", fms(s.P50)}, {"p90", fms(s.P90)}, {"p95", fms(s.P95)},
		{"p99", fms(s.P99)}, {"p99.9", fms(s.P999)}, {"max", fms(s.Max)},
		{"mean", fmt.Sprintf("%.3f", s.Mean/1e6)}, {"stddev", fmt.Sprintf("%.3f", s.StdDev/1e6)},
		{"lateness p50", fms(m.Lateness.P50)}, {"lateness p99", fms(m.Lateness.P99)},
		{"interference", pct(s.Interference)},
	})

	bins := MicrosecondBins(latencies)
	most := 1
	for _, b := range bins {
		most = max(most, b.Count)
	}
	lo, hi := float64(bins[0].Us), float64(bins[len(bins)-1].Us+1)
	h := newChart("Latency histogram, 1 µs bins (log scale)", "latency (µs)", "samples per 1 µs bin", lo, hi, 0.5, float64(most)*1.5, true)
	col := make([]int, histColumns)
	for _, b := range bins {
		i := min(int((float64(b.Us)-lo)/(hi-lo)*histColumns), histColumns-1)
		col[i] = max(col[i], b.Count)
	}
	width := (hi - lo) / histColumns
	// At least 3 px wide, so that a lone bin shows.
	bar := math.Max(width, 3*(hi-lo)/nominalW)
	for i, n := range col {
		if n > 0 {
			x := lo + float64(i)*width
			h.rectXY(x, x+bar, 0.5, float64(n), "#2a6fb0", 1, fmt.Sprintf("%.0f µs: up to %d", x, n))
		}
	}
	h.vmark(float64(m.DelayNs)/1000, "#b00", "requested delay", 0)
	var rows [][]string
	for i, b := range bins {
		if i == histRows {
			rows = append(rows, []string{fmt.Sprintf("… %d more bins", len(bins)-histRows), ""})
			break
		}
		rows = append(rows, []string{strconv.FormatInt(b.Us, 10), strconv.Itoa(b.Count)})
	}
	p.figure("Histogram", sum+"<br>"+table([]string{"µs", "samples"}, rows), h)

	// Latency against sample index, as the min and max of each bucket of
	// samples, so that a single spike still shows after decimation.
	t := newChart("Latency against sample index", "sample index", "latency (ms)", 0, float64(len(latencies)), 0, msOf(s.Max)*1.05, false)
	per := max(1, (len(latencies)+seriesBuckets-1)/seriesBuckets)
	var xs, ys []float64
	var trows [][]string
	for i := 0; i < len(latencies); i += per {
		chunk := latencies[i:min(i+per, len(latencies))]
		lo, hi := slices.Min(chunk), slices.Max(chunk)
		xs = append(xs, float64(i), float64(i+len(chunk)-1))
		ys = append(ys, msOf(lo), msOf(hi))
		if len(trows) < 50 || hi == s.Max {
			trows = append(trows, []string{fmt.Sprintf("%d–%d", i, i+len(chunk)-1), fms(lo), fms(hi)})
		}
	}
	t.polyline(xs, ys, "#2a6fb0", 1)
	t.polyline([]float64{0, float64(len(latencies))}, []float64{msOf(s.P50), msOf(s.P50)}, "#0a0", 1.5)
	t.legend("samples (min–max per bucket)", "#2a6fb0", "p50", "#0a0")
	note := fmt.Sprintf("<p>%d samples drawn as %d buckets of %d; the table shows the first 50 buckets and the maximum's.</p>", len(latencies), len(xs)/2, per)
	p.figure("Time series", note+table([]string{"samples", "min ms", "max ms"}, trows), t)
}
