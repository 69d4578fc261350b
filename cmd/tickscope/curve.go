package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/measure"
	"github.com/tickscope/tickscope/internal/outfile"
	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/term"
	"github.com/tickscope/tickscope/internal/version"
)

type curveOptions struct {
	from, to, step time.Duration
	samples        int
	method         string
	raw            string
	asJSON         bool
	sim            sim.Choice
}

func (a *app) curveCommand() *cobra.Command {
	var o curveOptions
	cmd := &cobra.Command{
		Use:   "curve",
		Short: "Measure the overshoot of waits from --from to --to and the tick it implies",
		Long: `Measure how far waits of increasing delay overshoot, and the tick that implies.

For each delay from --from to --to in --step, --samples waits of the method,
their mean and p95 overshoot (latency minus delay), drawn as a chart. On a
timer that ticks, the overshoot is a sawtooth; tickscope fits it and prints
the tick it implies (15.625 ms at the Windows default). On high-resolution
timers there is no sawtooth, and it says so. ESC or Ctrl+C stops early with
the curve so far. Changes nothing.`,
		Example: `  # delays of 1 to 100 ms, 10 waits each
  tickscope curve
  # finer: 100 µs to 5 ms in steps of 100 µs, drawn as HTML
  tickscope curve --from 100us --to 5ms --step 100us --html curve.html
  # the sawtooth of Windows' default 15.625 ms tick, on the model
  tickscope curve --simulate knee-26100 --to 50ms`,
		Args: noArgs,
	}
	a.onHost(cmd, &o.sim, "with --simulate: the model's random seed", func(cmd *cobra.Command, host seam.Host) error {
		return a.curve(cmd, host, &o)
	})
	f := cmd.Flags()
	f.DurationVar(&o.from, "from", time.Millisecond, "the shortest delay")
	f.DurationVar(&o.to, "to", 100*time.Millisecond, "the longest delay (at most 1s)")
	f.DurationVar(&o.step, "step", time.Millisecond, "the step between delays")
	f.IntVar(&o.samples, "samples", 10, "waits per delay (1..1000)")
	f.StringVar(&o.method, "method", "", "wait method (default: the OS's first relative one; see measure --help)")
	f.StringVar(&o.raw, "raw", "", "write every sample to this file (docs/raw-format.md)")
	f.BoolVar(&o.asJSON, "json", false, "print every point as JSON")
	registerOutputs(cmd, false)
	return cmd
}

func (a *app) curve(cmd *cobra.Command, host seam.Host, o *curveOptions) error {
	q, err := host.Query()
	if err != nil {
		return err
	}
	specs, err := measure.Curve(host, measure.Where(q, o.sim.Scenario), o.method, o.from, o.to, o.step, o.samples)
	if err != nil {
		return err
	}
	raw, err := outfile.OpenRaw(o.raw, rawLimits())
	if err != nil {
		return err
	}
	defer raw.Close()
	points, err := a.series(cmd.Context(), host, report.SimulatedPrefix(o.sim.Scenario)+"curve", specs, func(i int, p *rawfile.Point) {
		p.DelayNs = int64(specs[i].Delay) // each point its own delay
	})
	if err != nil {
		return err
	}
	file := &rawfile.File{Command: "curve", Simulated: o.sim.Scenario, Query: q, Method: specs[0].Method, DelayNs: int64(o.from), Points: points}
	if err := raw.Write(file, version.String()); err != nil {
		return err
	}
	r := report.Print(file, report.Judging{RawPath: o.raw})
	if r.Partial {
		a.warnf("%sstopped early: the curve covers the delays measured so far", report.SimulatedPrefix(o.sim.Scenario))
	}
	return writeOutputs(cmd, file, r.Value, a.emit(o.asJSON, r.Value, r.Text))
}

// series measures specs through the one measurement loop with a progress
// bar described by what, stoppable with ESC or Ctrl+C; label, when set, is
// sample.Series' done.
func (a *app) series(ctx context.Context, host seam.Host, what string, specs []sample.Spec, label func(int, *rawfile.Point)) ([]rawfile.Point, error) {
	ctx, done := term.Stoppable(ctx)
	defer done()
	bar := term.NewBar(a.stderr, len(specs), what+" (ESC or Ctrl+C stops early)")
	defer bar.Finish()
	return sample.Series(ctx, host, specs, func(i int, p *rawfile.Point) {
		if label != nil {
			label(i, p)
		}
		bar.Update(i+1, len(specs))
	})
}
