// Package report renders tickscope's results: text for people and JSON for
// programs. Every command has one renderer per format here, and the JSON
// shapes are the documented, stable ones (docs/json.md).
package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/printable"
	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/stats"
	"github.com/tickscope/tickscope/internal/sweep"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// Measurement is the result of `tickscope measure`.
type Measurement struct {
	// Simulated names the model scenario, empty for a real measurement.
	Simulated  string               `json:"simulated,omitempty"`
	OS         string               `json:"os"`
	OSBuild    string               `json:"os_build"`
	Method     string               `json:"method"`
	DelayNs    int64                `json:"delay_ns"`
	Requested  timerinfo.Setting    `json:"requested"`
	Granted    timerinfo.Setting    `json:"granted"`
	Conditions timerinfo.Conditions `json:"conditions"`
	Warmup     int                  `json:"warmup_discarded"`
	Overruns   int                  `json:"overruns"`
	// Load is the load it was measured under (--load); absent for none.
	Load *Load `json:"load,omitempty"`
	// Stopped is set when the user stopped the run: the figures cover the
	// samples taken until then.
	Stopped bool `json:"stopped"`
	// NotRunning counts the samples taken while the process was not
	// running, which the figures leave out; absent when it ran throughout.
	NotRunning *NotRunning    `json:"not_running,omitempty"`
	Summary    stats.Summary  `json:"summary"`
	Lateness   stats.Lateness `json:"lateness"`
	Histogram  []stats.Bin    `json:"histogram"`
	Warnings   []string       `json:"warnings"`
	// RawFile is where every sample was written, if anywhere.
	RawFile string `json:"raw_file,omitempty"`
}

// NotRunning is what a measurement saw of the process not running at all
// (sweep.NotRunning): its samples are left out of every figure.
type NotRunning = sweep.NotRunning

// HistogramBins is the number of regular bars in the terminal histogram.
const HistogramBins = 12

// OSBuild names the OS build a report describes: the Windows version or the
// Linux kernel release.
func OSBuild(r *timerinfo.Report) string {
	switch {
	case r.Windows != nil:
		return r.Windows.Version
	case r.Linux != nil:
		return r.Linux.KernelRelease
	case r.Other != nil:
		return r.Other.KernelRelease
	}
	return ""
}

// WriteMeasurement renders m for people.
func WriteMeasurement(w io.Writer, m *Measurement) {
	p := newPrinter(w, m.Simulated)
	title := fmt.Sprintf("tickscope measure: %s, %s delay, %d samples", m.Method, Delay(m.DelayNs), m.Summary.Count)
	if nr := m.NotRunning; nr != nil && nr.LeftOut > 0 {
		title += fmt.Sprintf(" (%d more left out: taken while the process was not running)", nr.LeftOut)
	}
	if m.Stopped {
		title += " (stopped early: figures cover the samples taken)"
	}
	p.line(title)
	p.line("")
	p.kv("setting", settingLine(m.Requested, m.Granted))
	cond := []string{m.OS + " " + m.OSBuild, "priority " + m.Conditions.Priority}
	if m.Conditions.CurrentBefore100ns != 0 {
		cond = append(cond, fmt.Sprintf("period before %s ms, after %s ms",
			timerinfo.FormatPeriodMS(m.Conditions.CurrentBefore100ns), timerinfo.FormatPeriodMS(m.Conditions.CurrentAfter100ns)))
	}
	if m.Conditions.TimerSlackNs != 0 {
		cond = append(cond, "timer slack "+time.Duration(m.Conditions.TimerSlackNs).String())
	}
	if m.Conditions.TimerThrottling != "" {
		cond = append(cond, "timer throttling "+m.Conditions.TimerThrottling)
	}
	p.kv("conditions", strings.Join(cond, "; "))
	writeLoad(p, m.Load)
	warm := fmt.Sprintf("%d discarded", m.Warmup)
	if m.Overruns > 0 {
		warm += fmt.Sprintf("; %d periodic deadlines overran and were skipped", m.Overruns)
	}
	p.kv("warm-up", warm)
	p.line("")
	s := m.Summary
	p.kv("latency", fmt.Sprintf("min %s  p50 %s  p90 %s  p95 %s  p99 %s  p99.9 %s  max %s ms",
		ms(s.Min), ms(s.P50), ms(s.P90), ms(s.P95), ms(s.P99), ms(s.P999), ms(s.Max)))
	p.kv("mean", fmt.Sprintf("%s ms  stddev %s ms", msf(s.Mean), msf(s.StdDev)))
	p.kv("lateness", fmt.Sprintf("p50 %s  p99 %s  (latency - requested delay)", fmtSigned(m.Lateness.P50), fmtSigned(m.Lateness.P99)))
	p.kv("interference", fmt.Sprintf("%.1f %% of samples over the median by more than 1 ms", s.Interference*100))
	p.line("")
	p.line("histogram (ms)")
	writeHistogram(p, m.Histogram, s.Count)
	for _, warning := range m.Warnings {
		p.line("")
		p.line("warning: " + warning)
	}
	if m.RawFile != "" {
		p.line("")
		p.line("raw samples written to " + m.RawFile)
	}
}

func settingLine(requested, granted timerinfo.Setting) string {
	if requested.IsZero() {
		return "none requested"
	}
	return fmt.Sprintf("requested %s, granted %s", requested, granted)
}

func writeHistogram(p *printer, bins []stats.Bin, total int) {
	const width = 40
	most := 1
	for _, b := range bins {
		most = max(most, b.Count)
	}
	// Enough decimals that neighbouring bins have different labels.
	decimals := 3
	if len(bins) > 0 && bins[0].Hi-bins[0].Lo < 1000 {
		decimals = 4
	}
	for _, b := range bins {
		label := fmt.Sprintf("%.*f - %.*f", decimals, float64(b.Lo)/1e6, decimals, float64(b.Hi)/1e6)
		if b.Overflow {
			label += " (tail)"
		}
		bar := Bar(b.Count, most, width)
		p.line(fmt.Sprintf("  %-28s %-*s %6d  %5.1f %%", label, width, bar, b.Count, 100*float64(b.Count)/float64(max(total, 1))))
	}
}

// Bar draws count/most of width cells in eighth-block steps, and at least a
// sliver for any non-zero count so that rare outliers stay visible.
func Bar(count, most, width int) string {
	if count == 0 {
		return ""
	}
	eighths := count * width * 8 / most
	eighths = max(eighths, 1)
	full, part := eighths/8, eighths%8
	s := strings.Repeat("█", full)
	if part > 0 {
		s += string([]rune("▏▎▍▌▋▊▉")[part-1])
	}
	return s
}

// ms renders ns as milliseconds with µs precision.
func ms(ns int64) string { return fmt.Sprintf("%.3f", float64(ns)/1e6) }

func msf(ns float64) string { return fmt.Sprintf("%.3f", ns/1e6) }

// fmtSigned renders a signed duration with a unit that suits its size.
func fmtSigned(ns int64) string {
	sign := "+"
	if ns < 0 {
		sign, ns = "-", -ns
	}
	switch {
	case ns < 1_000_000:
		return fmt.Sprintf("%s%.1f µs", sign, float64(ns)/1e3)
	default:
		return fmt.Sprintf("%s%.3f ms", sign, float64(ns)/1e6)
	}
}

// Delay renders a requested delay: "1 ms", "1.5 ms", "250 µs".
func Delay(ns int64) string {
	if ns >= 1_000_000 {
		return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.4f", float64(ns)/1e6), "0"), ".") + " ms"
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", float64(ns)/1e3), "0"), ".") + " µs"
}

// printer writes report lines, prefixing every one with SIMULATED when the
// figures come from the model, so that no line can be quoted as measured.
type printer struct {
	w      io.Writer
	prefix string
}

func newPrinter(w io.Writer, simulated string) *printer {
	return &printer{w: w, prefix: SimulatedPrefix(simulated)}
}

// SimulatedLabel starts every line of output (results, warnings, the
// progress bar) computed on the model of Windows timers rather than
// measured on a machine.
const SimulatedLabel = "SIMULATED  "

// SimulatedPrefix is SimulatedLabel for output of a model scenario, and
// nothing for a real measurement (scenario "").
func SimulatedPrefix(scenario string) string {
	if scenario == "" {
		return ""
	}
	return SimulatedLabel
}

// WriteScenarios lists the model's scenarios (--simulate list).
func WriteScenarios(w io.Writer, scenarios []sim.Scenario) {
	fmt.Fprintln(w, SimulatedLabel+"scenarios of the model of Windows timers (--simulate NAME with measure, bench, curve, apply or ui):")
	for _, sc := range scenarios {
		fmt.Fprintf(w, "%s%-16s %s\n", SimulatedLabel, sc.Name, sc.Summary)
	}
}

// line writes one line. Lines hold strings from outside tickscope (a raw
// file's, the OS's) and messages: each is made printable
// (printable.Message), so that none drives the terminal or splits the
// line.
func (p *printer) line(s string) {
	fmt.Fprintln(p.w, printable.Message(strings.TrimRight(p.prefix+s, " ")))
}

func (p *printer) kv(key, value string) { p.line(fmt.Sprintf("  %-16s %s", key, value)) }

// MeasurementOf summarises one point of a raw file, with the warnings that
// apply to it: the measure command and the analysis of a measure file render
// through this one function.
func MeasurementOf(f *rawfile.File, p *rawfile.Point) *Measurement {
	m := &Measurement{
		Simulated:  f.Simulated,
		OS:         f.Query.OS,
		OSBuild:    OSBuild(f.Query),
		Method:     f.Method,
		DelayNs:    f.DelayNs,
		Requested:  p.Requested,
		Granted:    p.Granted,
		Conditions: p.Conditions,
		Warmup:     p.Warmup,
		Overruns:   p.Overruns,
		Load:       LoadOf(f),
		Stopped:    p.Stopped,
		Warnings:   []string{},
	}
	sorted := slices.Clone(p.Running())
	slices.Sort(sorted)
	m.Summary = stats.SummarizeSorted(sorted)
	m.Lateness = stats.LatenessOf(m.Summary, f.DelayNs)
	m.Histogram = stats.Histogram(sorted, HistogramBins)
	if m.NotRunning = sweep.NotRunningOf([]rawfile.Point{*p}); m.NotRunning != nil {
		m.Warnings = append(m.Warnings, m.NotRunning.Sentence())
	}
	if m.Summary.Count > 0 && m.Summary.Min < f.DelayNs {
		m.Warnings = append(m.Warnings, fmt.Sprintf("%d samples ended before the requested delay: the wait returned early", countBelow(sorted, f.DelayNs)))
	}
	if win := f.Query.Windows; win != nil {
		before := p.Conditions.CurrentBefore100ns
		if before != 0 && before < win.Coarsest100ns {
			m.Warnings = append(m.Warnings, fmt.Sprintf("the timer was already at %s ms before this measurement: another process holds a request, so results for coarser settings are skewed", timerinfo.FormatPeriodMS(before)))
		}
		if g, r := p.Granted.Resolution100ns, p.Requested.Resolution100ns; timerinfo.GrantShowsFinerHold(r, g) {
			m.Warnings = append(m.Warnings, fmt.Sprintf("granted %s ms is finer than the %s ms requested: a finer request held elsewhere is in force", timerinfo.FormatPeriodMS(g), timerinfo.FormatPeriodMS(r)))
		}
	}
	return m
}

func countBelow(sorted []int64, v int64) int {
	n := 0
	for _, x := range sorted {
		if x >= v {
			break
		}
		n++
	}
	return n
}

// SimulatedWriter is w with SimulatedLabel at the start of every line, for
// the output of a command run on a model scenario, and w itself for a
// real run (scenario ""): apply --simulate prints through it.
func SimulatedWriter(w io.Writer, scenario string) io.Writer {
	if scenario == "" {
		return w
	}
	return &prefixWriter{w: w, prefix: []byte(SimulatedLabel), atStart: true}
}

// prefixWriter writes prefix before every line.
type prefixWriter struct {
	w       io.Writer
	prefix  []byte
	atStart bool
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	var out []byte
	for _, c := range b {
		if p.atStart {
			out = append(out, p.prefix...)
		}
		out = append(out, c)
		p.atStart = c == '\n'
	}
	if _, err := p.w.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}
