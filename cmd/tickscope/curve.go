package main

import (
	"fmt"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
)

type curveOptions struct {
	from, to, step time.Duration
	samples        int
	method         string
	raw            string
	asJSON         bool
	simulate       string
	seed           uint64
}

// maxCurvePoints bounds --from/--to/--step.
const maxCurvePoints = 1000

func (a *app) curveCommand() *cobra.Command {
	var o curveOptions
	cmd := &cobra.Command{
		Use:   "curve",
		Short: "Measure the overshoot of waits from --from to --to and the tick it implies",
		Long: `Measure how far waits of increasing delay overshoot (seed 004's experiment):
for each delay from --from to --to in --step, --samples waits of the method,
their mean and p95 overshoot (latency minus delay), drawn as a chart. On a
timer that ticks, the overshoot is a sawtooth; tickscope fits it and prints
the tick it implies (15.625 ms at the Windows default). On high-resolution
timers there is no sawtooth, and it says so. ESC or Ctrl+C stops early with
the curve so far. Changes nothing.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			host, listed, err := a.hostFor(o.simulate, o.seed, machineHost())
			if listed || err != nil {
				return err
			}
			return a.curve(cmd, host, &o)
		},
	}
	f := cmd.Flags()
	f.DurationVar(&o.from, "from", time.Millisecond, "the shortest delay")
	f.DurationVar(&o.to, "to", 100*time.Millisecond, "the longest delay (at most 1s)")
	f.DurationVar(&o.step, "step", time.Millisecond, "the step between delays")
	f.IntVar(&o.samples, "samples", 10, "waits per delay (1..1000)")
	f.StringVar(&o.method, "method", "", "wait method (default: the OS's first relative one; see measure --help)")
	f.StringVar(&o.raw, "raw", "", "write every sample to this file (docs/raw-format.md)")
	f.BoolVar(&o.asJSON, "json", false, "print every point as JSON")
	f.StringVar(&o.simulate, "simulate", "", "run on the model of Windows timers: a scenario name, or list")
	f.Uint64Var(&o.seed, "seed", 1, "with --simulate: the model's random seed")
	return cmd
}

func (a *app) curve(cmd *cobra.Command, host seam.Host, o *curveOptions) error {
	method, err := o.validate(host)
	if err != nil {
		return err
	}
	q, err := host.Query()
	if err != nil {
		return err
	}
	var delays []time.Duration
	for d := o.from; d <= o.to; d += o.step {
		delays = append(delays, d)
	}
	ctx, done := stoppable(cmd.Context())
	total := len(delays) * (o.samples + 1)
	bar := newProgress(a.stderr, total, simPrefix(o.simulate)+"curve (ESC or Ctrl+C stops early)")
	var points []rawfile.Point
	for i, d := range delays {
		p, err := sample.Measure(ctx, host, sample.Spec{Method: method.Name, Delay: d, Samples: o.samples, Warmup: 1}, nil)
		if err != nil {
			bar.finish()
			done()
			return fmt.Errorf("measuring %v: %w", d, err)
		}
		if len(p.Latencies) > 0 {
			p.DelayNs = int64(d)
			points = append(points, *p)
		}
		bar.update((i+1)*(o.samples+1), total)
		if p.Stopped {
			break
		}
	}
	bar.finish()
	done()
	if len(points) == 0 {
		return fmt.Errorf("stopped before any delay was measured")
	}
	file := newRawFile(rawfile.File{
		Command:   "curve",
		Simulated: o.simulate,
		Query:     q,
		Method:    method.Name,
		DelayNs:   int64(o.from),
		Points:    points,
	})
	if err := writeRaw(o.raw, file); err != nil {
		return err
	}
	c := report.CurveOf(file)
	c.RawFile = o.raw
	if c.Partial {
		a.warnf("%sstopped early: the curve covers the delays measured so far", simPrefix(o.simulate))
	}
	if o.asJSON {
		return writeJSON(a.stdout, c)
	}
	report.WriteCurve(a.stdout, c)
	return nil
}

func (o *curveOptions) validate(host seam.Host) (seam.Method, error) {
	methods := host.Methods()
	if o.method == "" {
		o.method = methods[0].Name
		for _, m := range methods {
			if m.Schedule == seam.Relative {
				o.method = m.Name
				break
			}
		}
	}
	method, err := seam.FindMethod(host, o.method)
	if err != nil {
		return method, badFlag("method", o.method, "valid methods on %s: %s", runtime.GOOS, methodNames(methods))
	}
	switch {
	case o.from <= 0 || o.from > maxDelay:
		return method, badFlag("from", o.from, "allowed above 0 and at most %v", maxDelay)
	case o.to <= 0 || o.to > maxDelay:
		return method, badFlag("to", o.to, "allowed above 0 and at most %v", maxDelay)
	case o.from >= o.to:
		return method, usagef("--from %v is not below --to %v", o.from, o.to)
	case o.step <= 0:
		return method, badFlag("step", o.step, "must be above 0")
	case int64((o.to-o.from)/o.step)+1 > maxCurvePoints:
		return method, badFlag("step", o.step, "gives %d points from %v to %v; at most %d", int64((o.to-o.from)/o.step)+1, o.from, o.to, maxCurvePoints)
	case o.samples < 1 || o.samples > 1000:
		return method, badFlag("samples", o.samples, "allowed 1..1000")
	case method.WholeMilliseconds && (o.from%time.Millisecond != 0 || o.step%time.Millisecond != 0):
		return method, usagef("--from %v and --step %v: method %s waits whole milliseconds", o.from, o.step, method.Name)
	}
	if err := rawfileCheck(o.raw); err != nil {
		return method, err
	}
	return method, nil
}
