package main

import (
	"sync"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/measure"
	"github.com/tickscope/tickscope/internal/outfile"
	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/term"
)

type benchOptions struct {
	judge      measure.JudgeFlags
	samples    int
	from, to   uint32
	exhaustive bool
	raw        string
	sim        measure.Simulation
	load       measure.LoadFlag
}

func (a *app) benchCommand() *cobra.Command {
	var o benchOptions
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Find the best timer setting, measured: Windows periods, Linux timer slack",
		Long: `Sweep the timer periods this machine offers, measure Sleep(1) at each on the
high-resolution clock, and recommend the best setting, then re-check it.

Candidates: every 100 ns over the first 50 µs above the finest period (where
the narrow fast band lives), every 5 µs up to 1 ms, every 50 µs up to 2 ms, and
every 1 ms up to the coarsest. Requests the OS grants the same period are
measured once; a chunk measured while the period changed is measured again.
Rows that measure the same form a band, recommended by its middle. A row
passes if p50 >= 0.99 ms and (by one significance test) at most 5 % of waits
exceed 2.5 ms, 2 % stall, 5 % are a tick (0.25 ms) over p50. latency never
picks a band another beats on p50 beyond the noise and on p99; bands whose
p50 is not shown (95 % interval) above the lowest by 1 % are equivalent: the
better tail wins, then the coarsest. Requests coarser than a period another
process holds measured that period and are left out.

Adaptive by default: a short look at every period, the full --samples only
where the answer is; --exhaustive gives every period the full count.
Ctrl+C stops early and recommends from what was measured, saying so.

Linux: sweeps the measuring thread's timer slack from 1 ns to 500 µs for a
1 ms clock_nanosleep wait (and as root each again with /dev/cpu_dma_latency
held at 0), every setting to the full --samples in interleaved chunks.
latency picks as on Windows, with 5 % of the p50 lateness as what is
noticeable; power the largest slack, no DMA hold if possible, with p99
lateness inside --budget-lateness. The pick prints its p50 and p99 with
their 95 % intervals and its margin over the runner-up.

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
	b, err := measure.NewBench(host, q, &rawfile.File{Command: "bench", Simulated: o.sim.Scenario, Query: q}, measure.BenchOptions{
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
	r, err := measure.RunBench(ctx, b, machineSystem(), load, report.Judging{Prefs: prefs, Rows: o.judge.Rows, RawPath: o.raw}, a.reporting(o.sim.Scenario, bar.UpdateTotal, finish, raw))
	if err != nil {
		return err
	}
	return writeOutputs(cmd, b.File, r.Value, a.emit(o.judge.JSON, r.Value, r.Text))
}
