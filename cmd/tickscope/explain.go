package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/tickscope/tickscope/internal/explain"
	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/outfile"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/term"
	"github.com/tickscope/tickscope/internal/tracefs"
	"github.com/tickscope/tickscope/internal/version"
)

type explainOptions struct {
	method  string
	delay   time.Duration
	samples int
	setting options.SettingFlags
	over    time.Duration
	layer   string
	worst   int
	raw     string
	asJSON  bool
	flight  bool
	load    sample.LoadRequest
	sim     sim.Choice
}

func (a *app) explainCommand() *cobra.Command {
	methods := machineHost().Methods()
	var o explainOptions
	cmd := &cobra.Command{
		Use:   "explain",
		Short: "Measure waits as measure does and say why each late one was late (Linux, Windows)",
		Long: `Measure waits as measure does and say why each late one was late: for every
wait later than the threshold (the run's own p99 lateness, or --over), its
lateness split into causes, in µs and as a share, then the aggregate of all
late waits by cause, by name (threads as comm:pid, IRQs, softirqs) and by
context (what the CPU was doing: the thread it ran, its idle state).

Methods on this OS (the first is the default):
` + seam.MethodList(methods) + `
Two layers; the output says which was used and why:
  0  no root, any kernel: the measuring thread's run-queue wait from
     /proc/self/task/TID/schedstat around each wait, waits armed late, and
     the run's /proc/interrupts, /proc/softirqs, steal and cpuidle deltas
  1  root and tracefs: generic tracepoints (timer, sched, irq, power) in a
     tracefs instance of tickscope's own, instances/tickscope-explain, made
     for the run and removed after it (a leftover one removed first; the
     top-level buffer and other instances are not touched; tracefs is
     mounted if it is not, and the output says so). One run traces at a
     time: a second waits for the first, saying so. Tracing adds to the
     lateness it explains, so its cost is measured in the same run: after
     each chunk of traced waits, half as many with the instance's
     recording off (the run takes half as long again); the output gives
     both chunks' p50 and p99 lateness and says when tracing changed them.
--layer auto (the default) takes layer 1 when it can, else layer 0.

--flight-recorder (layer 1 on Linux, with --over) bounds the memory the
trace takes, for long runs: the buffers are still drained every 100 ms,
but a page is dropped as soon as no wait can need it, and only the pages
of the late waits' windows (from 1 ms before a wait's start to its end,
and the last page before with what each CPU ran) are kept, for at most
the 1000 worst waits by measured lateness. The memory grows with those
windows, not with the run's length: a drain's 100 ms of pages, a few
pages of each CPU a window, and their events decoded at the end (for
1000 windows, hundreds of MiB: BENCHMARKS.md). A late wait whose window
lost events is not attributed; the output counts them. --over is
required: the run's own p99 is known only at its end, when the pages are
gone. Windows and --simulate refuse it: their ETW session keeps a
bounded number of events.

Windows: layer 1 only, elevated (a kernel ETW session of its own); macOS exits 1.
Ctrl+C stops early with a result for the waits taken. --raw writes the
samples as a measure file (docs/raw-format.md), which analyze reads; at
layer 1 it holds the untraced chunks' waits too. --html draws the
aggregate (each cause's share of the late waits' lateness) and the worst
waits, each a bar of its causes on a time axis from its deadline.

--load N keeps N busy threads (a CPU-bound loop each, unpinned) running
beside the waits, as measure does, so that the late waits have a known
cause to be explained by; the result and --raw's file say so.

--simulate NAME runs Windows' layer 1 on the model of Windows timers, on
any OS: the model's Sleeps, logged as a kernel ETW session would log them
(clock interrupts on the model's ticks, the thread's ready and switch in,
and in dpc-storm bursts of storport.sys and ndis.sys ISRs and DPCs and
another thread's runs after the tick), attributed as a session's events
are. Every line it prints says SIMULATED, its JSON "simulated": true;
--seed N changes the model's draws; --simulate list names the scenarios.
--raw is refused with --simulate: a raw file holds no explain section of
the model (docs/raw-format.md).`,
		Example: `  # 1000 waits of 1 ms, the late ones (over the run's p99) explained
  tickscope explain
  # every wait more than 200 µs late, layer 0 even as root
  tickscope explain --over 200us --layer 0
  # as JSON, with nanosleep, every sample kept
  tickscope explain --method nanosleep --samples 2000 --json --raw w.json
  # the aggregate and the worst waits drawn as a page
  tickscope explain --html explain.html
  # a long run (about an hour: 66699 traced waits of 36 ms and the
  # untraced ones), keeping only the windows of waits over 2 ms late
  tickscope explain --flight-recorder --over 2ms --delay 36ms --samples 66699
  # Windows' attribution on the model of Windows timers, on any OS
  tickscope explain --simulate dpc-storm --ms 0.5 --over 600us`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.explain(cmd, &o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.method, "method", "", "wait method: "+seam.MethodNames(methods)+" (default "+methods[0].Name+")")
	f.DurationVar(&o.delay, "delay", time.Millisecond, "requested delay of each wait (at most 1s)")
	f.IntVar(&o.samples, "samples", 1000, fmt.Sprintf("number of samples (1..%d; at layer 1 on Linux 1..%d)", sample.MaxSamples, explain.MaxTracedSamples))
	registerMeasureSetting(f, &o.setting)
	f.DurationVar(&o.over, "over", 0, "explain the waits later than this (default: later than the run's own p99 lateness)")
	f.StringVar(&o.layer, "layer", "auto", "auto, 0 (Linux: schedstat and /proc counters, no root) or 1 (a trace: Linux tracefs as root, Windows ETW elevated)")
	f.IntVar(&o.worst, "worst", 10, fmt.Sprintf("late waits shown one by one (1..%d)", explain.MaxWorst))
	f.StringVar(&o.raw, "raw", "", "write every sample to this file, as measure does (docs/raw-format.md)")
	f.BoolVar(&o.asJSON, "json", false, "print the result as JSON (docs/json.md)")
	f.BoolVar(&o.flight, "flight-recorder", false, "layer 1 on Linux, with --over: keep only the late waits' windows of the trace, so that a long run's memory is a short one's")
	registerLoad(f, &o.load)
	registerSimulation(f, &o.sim, "with --simulate: the model's random seed")
	registerOutputs(cmd, false)
	return cmd
}

func (a *app) explain(cmd *cobra.Command, o *explainOptions) error {
	layer, err := explain.ParseLayer(o.layer)
	if err != nil {
		return err
	}
	opts := explain.Options{Method: o.method, Delay: o.delay, Samples: o.samples, Over: o.over, Layer: layer, Worst: o.worst, FlightRecorder: o.flight}
	if err := opts.Check(); err != nil {
		return err
	}
	machine, sys, err := a.explainHost(o)
	if machine == nil || err != nil {
		return err
	}
	scenario := o.sim.Scenario
	host, load, err := o.load.Host(machine, scenario)
	if err != nil {
		return err
	}
	opts.Load = load
	q, err := host.Query()
	if err != nil {
		return err
	}
	spec, err := sample.OneDelay(host, q.OS, o.method, o.delay, o.samples)
	if err != nil {
		return err
	}
	if opts.Setting, err = options.Setting(q, o.setting); err != nil {
		return err
	}
	raw, err := outfile.OpenRaw(o.raw, rawLimits())
	if err != nil {
		return err
	}
	defer raw.Close()
	bar := term.NewBar(a.stderr, spec.Samples+spec.Warmup, report.SimulatedPrefix(scenario)+"explaining "+spec.Method)
	res, file, err := explain.Run(cmd.Context(), host, q, sys, opts, explain.Reporting{Progress: bar.UpdateTotal, Finished: bar.Finish, TraceWaiting: func() {
		a.warnf("the lock of the trace %s is held, by another tickscope explain or another program: waiting for it (Ctrl+C stops)", tracefs.InstanceName)
	}})
	if err != nil {
		return err
	}
	if res.Stopped {
		a.warnf("%sstopped early: the result covers %d of %d samples", report.SimulatedPrefix(scenario), res.Waits, spec.Samples)
	}
	if err := raw.Write(file, version.String()); err != nil {
		return err
	}
	page := res.Page(o.worst)
	if scenario != "" {
		for i, l := range page.Summary {
			page.Summary[i] = report.SimulatedLabel + l
		}
	}
	return writeOutputs(cmd, file, page, a.emit(o.asJSON, res, func(w io.Writer) { res.WriteText(report.SimulatedWriter(w, scenario), o.worst) }))
}

// explainHost is the host and System --simulate and --seed name: this
// machine's, or the model's with its kernel events as the trace. It is
// nil, with no error, for --simulate list, which it has printed.
func (a *app) explainHost(o *explainOptions) (seam.Host, explain.System, error) {
	s := &o.sim
	switch s.Scenario {
	case "":
		if s.SeedSet {
			return nil, nil, options.BadFlag("seed", s.Seed, "the model's seed, used only with --simulate; this machine's waits take none")
		}
		if err := explain.Supported(); err != nil {
			return nil, nil, err
		}
		return machineHost(), explain.NewSystem(), nil
	case "list":
		if s.SeedSet {
			return nil, nil, options.BadFlag("seed", s.Seed, "the model's seed; --simulate list runs nothing and takes none")
		}
		fmt.Fprintln(a.stdout, report.SimulatedLabel+"scenarios of the model of Windows timers for explain (--simulate NAME):")
		for _, sc := range sim.KernelScenarios() {
			fmt.Fprintf(a.stdout, "%s%-16s %s\n", report.SimulatedLabel, sc.Name, sc.Summary)
		}
		return nil, nil, nil
	}
	if o.raw != "" {
		return nil, nil, options.BadFlag("raw", o.raw, "not with --simulate: a raw file holds no explain section of the model (docs/raw-format.md)")
	}
	model, kernel, err := sim.NewKernelHost(s.Scenario, s.Seed)
	if err != nil {
		return nil, nil, options.BadFlag("simulate", s.Scenario, "the scenarios are %s (or list)", sim.KernelScenarioNames())
	}
	return model, explain.ModelSystem(kernel, s.Scenario), nil
}
