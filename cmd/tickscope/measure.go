package main

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// Bounds on measure's flags.
const (
	maxDelay = time.Second
	maxSlack = time.Second
)

type measureOptions struct {
	method     string
	delay      time.Duration
	samples    int
	resolution uint32
	ms         float64
	slack      time.Duration
	raw        string
	asJSON     bool
	simulate   string
	seed       uint64
}

func (a *app) measureCommand() *cobra.Command {
	host := machineHost()
	methods := host.Methods()
	var o measureOptions
	cmd := &cobra.Command{
		Use:   "measure",
		Short: "Measure what a wait really takes on this machine; sets nothing unless asked",
		Long: `Measure what a wait really takes: the whole distribution of its latency on the
high-resolution clock, from a thread locked to its OS thread.

Methods on this OS (the first is the default):
` + methodList(methods) + `
--resolution and --ms (Windows) request a timer period in this process for the
measurement and release it after; --slack (Linux) sets the measuring thread's
timer slack. Nothing outlives the command.

The result: min, p50, p90, p95, p99, p99.9, max, mean, stddev, lateness
(latency minus the requested delay) at p50 and p99, interference (the share of
samples over the median by more than 1 ms), a histogram, and the conditions it
ran under. Ctrl+C stops early and reports what was measured.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, listed, err := a.hostFor(o.simulate, o.seed, host)
			if listed || err != nil {
				return err
			}
			return a.measure(cmd, h, &o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.method, "method", "", "wait method: "+methodNames(methods)+" (default "+methods[0].Name+")")
	f.DurationVar(&o.delay, "delay", time.Millisecond, "requested delay of each wait (at most 1s)")
	f.IntVar(&o.samples, "samples", 1000, fmt.Sprintf("number of samples (1..%d)", sample.MaxSamples))
	f.Uint32Var(&o.resolution, "resolution", 0, "Windows: request this timer period, in 100 ns units")
	f.Float64Var(&o.ms, "ms", 0, "Windows: request this timer period, in milliseconds")
	f.DurationVar(&o.slack, "slack", 0, "Linux: the measuring thread's timer slack (1ns..1s)")
	f.StringVar(&o.raw, "raw", "", "write every sample to this file (docs/raw-format.md)")
	f.BoolVar(&o.asJSON, "json", false, "print the result as JSON (docs/json.md)")
	f.StringVar(&o.simulate, "simulate", "", "run on the model of Windows timers instead of this machine: a scenario name, or list")
	f.Uint64Var(&o.seed, "seed", 1, "with --simulate: the model's random seed")
	return cmd
}

func methodList(methods []seam.Method) string {
	var b strings.Builder
	for _, m := range methods {
		fmt.Fprintf(&b, "  %-12s %s\n", m.Name, m.Summary)
	}
	return b.String()
}

func methodNames(methods []seam.Method) string {
	names := make([]string, len(methods))
	for i, m := range methods {
		names[i] = m.Name
	}
	return strings.Join(names, ", ")
}

// setting validates the OS-specific setting flags and returns the request.
// Flags are checked against the OS's own range, so it needs the query.
func (o *measureOptions) setting(cmd *cobra.Command, q *timerinfo.Report) (timerinfo.Setting, error) {
	var s timerinfo.Setting
	resSet, msSet, slackSet := cmd.Flags().Changed("resolution"), cmd.Flags().Changed("ms"), cmd.Flags().Changed("slack")
	if resSet && msSet {
		return s, usagef("--resolution %d and --ms %v: give one of them, not both", o.resolution, o.ms)
	}
	if err := windowsOnly(cmd, q, "resolution", "ms"); err != nil {
		return s, err
	}
	if err := linuxOnly(cmd, q, "slack"); err != nil {
		return s, err
	}
	if slackSet {
		if o.slack < 1 || o.slack > maxSlack {
			return s, badFlag("slack", o.slack, "allowed 1ns..1s (0 would reset the default)")
		}
		s.SlackNs = int64(o.slack)
	}
	if resSet || msSet {
		period, err := periodFlag(cmd, o.resolution, o.ms, q.Windows)
		if err != nil {
			return s, err
		}
		s.Resolution100ns = period
	}
	return s, nil
}

// validate checks what does not need the OS.
func (o *measureOptions) validate(host seam.Host) (seam.Method, error) {
	if o.method == "" {
		o.method = host.Methods()[0].Name
	}
	if o.samples < 1 || o.samples > sample.MaxSamples {
		return seam.Method{}, badFlag("samples", o.samples, "allowed 1..%d", sample.MaxSamples)
	}
	method, err := seam.FindMethod(host, o.method)
	if err != nil {
		where := runtime.GOOS
		if o.simulate != "" {
			where = "the model"
		}
		return method, badFlag("method", o.method, "valid methods on %s: %s", where, methodNames(host.Methods()))
	}
	if o.delay <= 0 || o.delay > maxDelay {
		return method, badFlag("delay", o.delay, "allowed above 0 and at most %v", maxDelay)
	}
	if method.WholeMilliseconds && o.delay%time.Millisecond != 0 {
		return method, badFlag("delay", o.delay, "method %s waits whole milliseconds: use 1ms, 2ms, ...", method.Name)
	}
	if err := rawfileCheck(o.raw); err != nil {
		return method, err
	}
	return method, nil
}

func (a *app) measure(cmd *cobra.Command, host seam.Host, o *measureOptions) error {
	method, err := o.validate(host)
	if err != nil {
		return err
	}
	q, err := host.Query()
	if err != nil {
		return err
	}
	setting, err := o.setting(cmd, q)
	if err != nil {
		return err
	}
	spec := sample.Spec{
		Method:  method.Name,
		Delay:   o.delay,
		Samples: o.samples,
		Warmup:  sample.DefaultWarmup(o.samples),
		Setting: setting,
	}
	what := "measuring " + method.Name
	if o.simulate != "" {
		what = "SIMULATED " + what
	}
	bar := newProgress(a.stderr, spec.Samples+spec.Warmup, what)
	point, err := sample.Measure(cmd.Context(), host, spec, bar.update)
	bar.finish()
	if err != nil {
		return fmt.Errorf("measuring %s: %w", method.Name, err)
	}
	if len(point.Latencies) == 0 {
		return fmt.Errorf("stopped before any sample was measured")
	}
	if point.Stopped {
		a.warnf("stopped early: the result covers %d of %d samples", len(point.Latencies), spec.Samples)
	}
	file := newRawFile(rawfile.File{
		Command:   "measure",
		Simulated: o.simulate,
		Query:     q,
		Method:    method.Name,
		DelayNs:   int64(o.delay),
		Points:    []rawfile.Point{*point},
	})
	if err := writeRaw(o.raw, file); err != nil {
		return err
	}
	m := report.MeasurementOf(file, point)
	m.RawFile = o.raw
	if o.asJSON {
		return writeJSON(a.stdout, m)
	}
	report.WriteMeasurement(a.stdout, m)
	return nil
}
