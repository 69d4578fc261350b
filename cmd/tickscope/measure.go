package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/measure"
	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/outfile"
	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/term"
	"github.com/tickscope/tickscope/internal/version"
)

type measureOptions struct {
	method  string
	delay   time.Duration
	samples int
	setting options.SettingFlags
	raw     string
	asJSON  bool
	sim     sim.Choice
	load    sample.LoadRequest
}

func (a *app) measureCommand() *cobra.Command {
	methods := machineHost().Methods()
	var o measureOptions
	cmd := &cobra.Command{
		Use:   "measure",
		Short: "Measure what a wait really takes on this machine; sets nothing unless asked",
		Long: `Measure what a wait really takes: the whole distribution of its latency on the
high-resolution clock, from a thread locked to its OS thread.

Methods on this OS (the first is the default):
` + seam.MethodList(methods) + `
--resolution and --ms (Windows) request a timer period in this process for the
measurement and release it after; --slack (Linux) sets the measuring thread's
timer slack. Nothing outlives the command.

The result: min, p50, p90, p95, p99, p99.9, max, mean, stddev, lateness
(latency minus the requested delay) at p50 and p99, interference (the share of
samples over the median by more than 1 ms), a histogram, and the conditions it
ran under. Ctrl+C stops early and reports what was measured.

--load N keeps N busy threads (a CPU-bound loop each, unpinned) running
beside the measurement; the result and --raw's file say so (not with
--simulate: the model has no CPUs to load).`,
		Example: `  # 1000 waits of 1 ms with the default method
  tickscope measure
  # 2000 waits of 500 µs with nanosleep, every sample kept
  tickscope measure --method nanosleep --delay 500us --samples 2000 --raw w.json
  # Windows: with the timer period at 0.5 ms for the measurement
  tickscope measure --ms 0.5
  # on the model of Windows timers, on any OS
  tickscope measure --simulate knee-26100`,
		Args: noArgs,
	}
	a.onHost(cmd, &o.sim, "with --simulate: the model's random seed", func(cmd *cobra.Command, host seam.Host) error {
		return a.measure(cmd, host, &o)
	})
	f := cmd.Flags()
	f.StringVar(&o.method, "method", "", "wait method: "+seam.MethodNames(methods)+" (default "+methods[0].Name+")")
	f.DurationVar(&o.delay, "delay", time.Millisecond, "requested delay of each wait (at most 1s)")
	f.IntVar(&o.samples, "samples", 1000, fmt.Sprintf("number of samples (1..%d)", sample.MaxSamples))
	registerMeasureSetting(f, &o.setting)
	f.StringVar(&o.raw, "raw", "", "write every sample to this file (docs/raw-format.md)")
	f.BoolVar(&o.asJSON, "json", false, "print the result as JSON (docs/json.md)")
	registerLoad(f, &o.load)
	registerOutputs(cmd, true)
	return cmd
}

func (a *app) measure(cmd *cobra.Command, host seam.Host, o *measureOptions) error {
	host, load, err := o.load.Host(host, o.sim.Scenario)
	if err != nil {
		return err
	}
	q, err := host.Query()
	if err != nil {
		return err
	}
	spec, err := measure.Measure(host, measure.Where(q, o.sim.Scenario), o.method, o.delay, o.samples)
	if err != nil {
		return err
	}
	raw, err := outfile.OpenRaw(o.raw, rawLimits())
	if err != nil {
		return err
	}
	defer raw.Close()
	if spec.Setting, err = options.Setting(q, o.setting); err != nil {
		return err
	}
	bar := term.NewBar(a.stderr, spec.Samples+spec.Warmup, report.SimulatedPrefix(o.sim.Scenario)+"measuring "+spec.Method)
	file, r, err := measure.RunMeasure(cmd.Context(), host, q, spec, load, report.Judging{RawPath: o.raw}, a.reporting(o.sim.Scenario, bar.Update, bar.Finish, raw))
	if err != nil {
		return err
	}
	return writeOutputs(cmd, file, r.Value, a.emit(o.asJSON, r.Value, r.Text))
}

// reporting is where measure's and bench's runs report on the terminal:
// the progress bar, hints and warnings on standard error, the samples to
// --raw's file.
func (a *app) reporting(scenario string, progress func(int, int), finished func(), raw *outfile.Raw) report.Reporting {
	return report.Reporting{
		Scenario: scenario, Progress: progress, Finished: finished,
		Hint:    func(msg string) { a.hintf("%s", msg) },
		Warn:    func(msg string) { a.warnf("%s", msg) },
		Samples: func(f *rawfile.File) error { return raw.Write(f, version.String()) },
	}
}
