package main

import (
	"sync"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/bench"
	"github.com/tickscope/tickscope/internal/outfile"
	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/term"
)

type benchOptions struct {
	judge      bench.JudgeFlags
	samples    int
	from, to   uint32
	exhaustive bool
	raw        string
	sim        sim.Choice
	load       sample.LoadRequest
}

func (a *app) benchCommand() *cobra.Command {
	var o benchOptions
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Find the best timer setting, measured: Windows periods, Linux timer slack",
		Long: `Sweep the timer settings this machine offers, measure a wait at each, and
recommend the best one, then re-check it.

Windows: the periods from the finest to the coarsest (finely where the fast
bands live), Sleep(1) at each on the high-resolution clock. Linux: the
measuring thread's timer slack from 1 ns to 500 µs for a 1 ms clock_nanosleep
wait (and as root each again with /dev/cpu_dma_latency held at 0). The pick
prints its p50 and p99 with their 95 % intervals and its margin over the
runner-up. Which settings are measured, how a setting passes and which one is
picked: how-it-works.md, "tickscope bench" (in the release archive; docs/ in
the source).

Adaptive by default: a short look at every period, the full --samples only
where the answer is; --exhaustive gives every period the full count.
Ctrl+C stops early and recommends from what was measured, saying so.

--load N keeps N busy threads (a CPU-bound loop each, at normal priority,
unpinned) running for the whole sweep, so that it measures a machine at
work, not an idle one; the result, --raw's file and --html say so.
--simulate runs the whole bench on the model of Windows timers, on any OS
(without --load: the model runs on a virtual clock, with no CPUs to load).`,
		Example: `  # the best setting for this machine, with a report to share
  tickscope bench --html bench.html --raw bench.json
  # the coarsest setting inside the budgets, every period measured in full
  tickscope bench --prefer power --exhaustive
  # on the model of Windows timers, on any OS
  tickscope bench --simulate narrow-band`,
		Args: noArgs,
	}
	o.sim.SeedOnMachine = true
	a.onHost(cmd, &o.sim, "the sweep's random order (and with --simulate the model's seed)", func(cmd *cobra.Command, host seam.Host) error {
		return a.bench(cmd, host, &o)
	})
	f := cmd.Flags()
	registerJudge(f, &o.judge)
	f.IntVar(&o.samples, "samples", 200, "samples per period: all of them with --exhaustive, the most any gets otherwise (20..1000)")
	f.Uint32Var(&o.from, "from", 0, "finest period to try, 100 ns units (default: the finest the OS offers)")
	f.Uint32Var(&o.to, "to", 0, "coarsest period to try, 100 ns units (default: the coarsest)")
	f.BoolVar(&o.exhaustive, "exhaustive", false, "give every period the full sample count")
	f.StringVar(&o.raw, "raw", "", "write every sample of every period to this file (docs/raw-format.md)")
	registerLoad(f, &o.load)
	registerOutputs(cmd, false)
	return cmd
}

// bench sweeps the Windows timer periods, or on Linux the measuring
// thread's timer slack, writes every sample, then judges.
func (a *app) bench(cmd *cobra.Command, host seam.Host, o *benchOptions) error {
	prefs, err := o.judge.Preferences()
	if err != nil {
		return err
	}
	host, load, err := o.load.Host(host, o.sim.Scenario)
	if err != nil {
		return err
	}
	raw, err := outfile.OpenRaw(o.raw, rawLimits())
	if err != nil {
		return err
	}
	defer raw.Close()
	q, err := host.Query()
	if err != nil {
		return err
	}
	changed := cmd.Flags().Changed
	b, err := bench.New(host, q, &rawfile.File{Command: "bench", Simulated: o.sim.Scenario, Query: q}, bench.Options{
		Samples: o.samples, Exhaustive: o.exhaustive, Seed: o.sim.Seed, Prefs: prefs,
		From: o.from, FromSet: changed("from"), To: o.to, ToSet: changed("to"), Changed: changed,
	})
	if err != nil {
		return err
	}
	ctx, done := term.Stoppable(cmd.Context())
	bar := term.NewBar(a.stderr, b.Total, report.SimulatedPrefix(o.sim.Scenario)+"bench (ESC or Ctrl+C stops early)")
	finish := sync.OnceFunc(func() { bar.Finish(); done() })
	defer finish()
	r, err := bench.Run(ctx, b, machineSystem(), load, report.Judging{Prefs: prefs, Rows: o.judge.Rows, RawPath: o.raw}, a.reporting(o.sim.Scenario, bar.UpdateTotal, finish, raw))
	if err != nil {
		return err
	}
	return writeOutputs(cmd, b.File, r.Value, a.emit(o.judge.JSON, r.Value, r.Text))
}
