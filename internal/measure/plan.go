// Package measure is looking at waits: what the measure, curve and compare
// commands measure and how they run it, for the command line and for
// tickscope ui alike.
//
// Their options become what to measure, checked against the host: the
// specs the one measurement loop (sample.Series) takes. A value that is
// not allowed is a usage error naming the flag, the value and what is
// allowed (package options), returned before anything is measured, so
// every rule is testable without a command line.
//
// RunMeasure runs a measure as the command does: stopping early, the raw
// file's samples, and the result printed (package report).
package measure

import (
	"slices"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// Where names the host in messages: the OS its query reports, or the model
// when the command runs on one.
func Where(q *timerinfo.Report, simulated string) string {
	if simulated != "" {
		return "the model"
	}
	return q.OS
}

// method finds the named method on host (sample.NamedMethod).
func method(host seam.Host, where, name string, firstRelative bool) (seam.Method, error) {
	return sample.NamedMethod(host, where, name, firstRelative)
}

// Measure is measure's spec, without its setting: samples of one wait of
// delay by the named method (the host's first when ""), as
// sample.OneDelay checks them.
func Measure(host seam.Host, where, methodName string, delay time.Duration, samples int) (sample.Spec, error) {
	return sample.OneDelay(host, where, methodName, delay, samples)
}

// Curve is curve's specs: samples waits of the named method (the host's
// first relative one when "") at each delay from from to to in step.
func Curve(host seam.Host, where, methodName string, from, to, step time.Duration, samples int) ([]sample.Spec, error) {
	m, err := method(host, where, methodName, true)
	if err != nil {
		return nil, err
	}
	if err := options.Delay("from", from); err != nil {
		return nil, err
	}
	if err := options.Delay("to", to); err != nil {
		return nil, err
	}
	switch {
	case from >= to:
		return nil, options.Usagef("--from %v is not below --to %v", from, to)
	case step <= 0:
		return nil, options.BadFlag("step", step, "must be above 0")
	case int64((to-from)/step)+1 > rawfile.MaxCurvePoints:
		return nil, options.BadFlag("step", step, "gives %d points from %v to %v; at most %d", int64((to-from)/step)+1, from, to, rawfile.MaxCurvePoints)
	case samples < 1 || samples > rawfile.MaxCurveSamples:
		return nil, options.BadFlag("samples", samples, "allowed 1..%d", rawfile.MaxCurveSamples)
	case m.WholeMilliseconds && (from%time.Millisecond != 0 || step%time.Millisecond != 0):
		return nil, options.Usagef("--from %v and --step %v: method %s waits whole milliseconds", from, step, m.Name)
	}
	var specs []sample.Spec
	for d := from; d <= to; d += step {
		specs = append(specs, sample.Spec{Method: m.Name, Delay: d, Samples: samples, Warmup: 1})
	}
	return specs, nil
}

// NamedSetting is a setting compare offers, by the name --settings takes.
type NamedSetting struct {
	Name    string
	Setting timerinfo.Setting
}

// CompareSettings are the settings compare offers on the OS q describes:
// Windows none, timeBeginPeriod(1) and NtSetTimerResolution at 1 and
// 0.5 ms where the range has them; Linux the default, slack 1 ns and, as
// root, slack 1 ns with cpu_dma_latency held at 0.
func CompareSettings(q *timerinfo.Report) []NamedSetting {
	switch {
	case q.Windows != nil:
		out := []NamedSetting{{"none", timerinfo.Setting{}}, {"timebeginperiod-1", timerinfo.Setting{TimeBeginPeriodMs: 1}}}
		for _, s := range []struct {
			name   string
			period uint32
		}{{"nt-1ms", 10000}, {"nt-0.5ms", 5000}} {
			if s.period >= q.Windows.Finest100ns && s.period <= q.Windows.Coarsest100ns {
				out = append(out, NamedSetting{s.name, timerinfo.Setting{Resolution100ns: s.period}})
			}
		}
		return out
	case q.Linux != nil:
		out := []NamedSetting{{"default", timerinfo.Setting{}}, {"slack-1ns", timerinfo.Setting{SlackNs: 1}}}
		if q.Linux.Root {
			zero := int32(0)
			out = append(out, NamedSetting{"dma-0", timerinfo.Setting{SlackNs: 1, CPUDMALatencyUs: &zero}})
		}
		return out
	}
	return []NamedSetting{{"none", timerinfo.Setting{}}}
}

// Pick filters valid names by a comma-separated selection of them; ""
// (the flag left out: an empty value given is refused before, by
// options.EmptyValue) selects all. An empty name or a name given twice is
// refused: each would have been a column or row of nothing.
func Pick(flag, selection string, valid []string) ([]string, error) {
	if selection == "" {
		return valid, nil
	}
	var out []string
	for _, name := range strings.Split(selection, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "":
			return nil, options.BadFlag(flag, selection, "an empty name in the list; valid here: %s", strings.Join(valid, ", "))
		case !slices.Contains(valid, name):
			return nil, options.BadFlag(flag, selection, "unknown %q; valid here: %s", name, strings.Join(valid, ", "))
		case slices.Contains(out, name):
			return nil, options.BadFlag(flag, selection, "%s is named twice; name each once (valid here: %s)", name, strings.Join(valid, ", "))
		}
		out = append(out, name)
	}
	return out, nil
}

// Matrix is what compare measures: every chosen method (rows) under every
// chosen setting (columns).
type Matrix struct {
	Methods []string
	// Settings are the columns' labels (timerinfo.Setting.String).
	Settings []string
	// Specs are the cells in method-major order, leaving out the cells of
	// a method that waits whole milliseconds when the interval is not.
	Specs []sample.Spec
	// LeftOut are the methods left out of a matrix of all methods (no
	// --methods) because they wait whole milliseconds and the interval is
	// not: the command says so.
	LeftOut  []string
	periodic map[string]bool
}

// Compare is compare's matrix: cycles waits of interval per cell, for the
// comma-separated methods and settings (all on this host when ""). A
// method named in methods that cannot wait interval (it waits whole
// milliseconds) is bad input, found before anything is measured; with
// methods "" such methods are left out (Matrix.LeftOut).
func Compare(host seam.Host, q *timerinfo.Report, interval time.Duration, cycles int, methods, settings string) (*Matrix, error) {
	if err := options.Delay("interval", interval); err != nil {
		return nil, err
	}
	if cycles < 10 || cycles > rawfile.MaxCompareCycles {
		return nil, options.BadFlag("cycles", cycles, "allowed 10..%d", rawfile.MaxCompareCycles)
	}
	m := &Matrix{periodic: map[string]bool{}}
	var methodNames []string
	wholeMs := map[string]bool{}
	for _, method := range host.Methods() {
		methodNames = append(methodNames, method.Name)
		m.periodic[method.Name], wholeMs[method.Name] = method.Schedule == seam.Periodic, method.WholeMilliseconds
	}
	picked, err := Pick("methods", methods, methodNames)
	if err != nil {
		return nil, err
	}
	for _, name := range picked {
		switch {
		case !wholeMs[name] || interval%time.Millisecond == 0:
			m.Methods = append(m.Methods, name)
		case methods != "":
			return nil, options.BadFlag("interval", interval, "method %s (--methods) waits whole milliseconds: use 1ms, 2ms, ..., or leave %s out", name, name)
		default:
			m.LeftOut = append(m.LeftOut, name)
		}
	}
	offered := CompareSettings(q)
	var settingNames []string
	for _, s := range offered {
		settingNames = append(settingNames, s.Name)
	}
	chosen, err := Pick("settings", settings, settingNames)
	if err != nil {
		return nil, err
	}
	for _, name := range chosen {
		m.Settings = append(m.Settings, offered[slices.Index(settingNames, name)].Setting.String())
	}
	for _, name := range m.Methods {
		for _, s := range chosen {
			m.Specs = append(m.Specs, sample.Spec{Method: name, Delay: interval, Samples: cycles, Warmup: 2, Setting: offered[slices.Index(settingNames, s)].Setting})
		}
	}
	if len(m.Specs) == 0 {
		return nil, options.BadFlag("interval", interval, "methods %s wait whole milliseconds: nothing to measure", strings.Join(m.LeftOut, ", "))
	}
	return m, nil
}

// Label records on a cell's point its method and whether its waits kept
// an absolute schedule, which the matrix's intervals depend on: it is a
// done for sample.Series over m.Specs.
func (m *Matrix) Label(i int, p *rawfile.Point) {
	p.Method, p.Periodic = m.Specs[i].Method, m.periodic[m.Specs[i].Method]
}
