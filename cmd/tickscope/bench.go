package main

import (
	"fmt"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/platform"
	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sweep"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

type benchOptions struct {
	judge      judgeFlags
	samples    int
	from, to   uint32
	exhaustive bool
	raw        string
	simulate   string
	seed       uint64
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
measured once. Neighbouring periods that measure the same form a band, and a
band is recommended by its middle. No row is recommended unless interference
<= 2 %, p50 >= 0.99 ms, p95 <= 2.5 ms, and no more than about 5 % of its
waits land over its p50 by 0.25 ms (a tick); rows next to a failing row are
edges and fail too.

The default design samples adaptively: a short look at every period, then the
full --samples only where the answer is. --exhaustive gives every period the
full count (TickTune's fixed design). Ctrl+C stops early and recommends from
what was measured, saying so.

Linux: sweeps the measuring thread's timer slack from 1 ns to 500 µs for a
1 ms clock_nanosleep wait (and as root each again with /dev/cpu_dma_latency
held at 0), every setting to the full --samples in interleaved chunks.
latency picks the lowest p50 that passes the gates; power the largest slack,
preferring no DMA hold, whose p99 lateness is within --budget-lateness.
--simulate runs the whole bench on the model of Windows timers, on any OS.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			host, listed, err := a.hostFor(o.simulate, o.seed, machineHost())
			if listed || err != nil {
				return err
			}
			return a.bench(cmd, host, &o)
		},
	}
	f := cmd.Flags()
	o.judge.register(f)
	f.IntVar(&o.samples, "samples", 200, "samples per period: all of them with --exhaustive, the most any gets otherwise (20..1000)")
	f.Uint32Var(&o.from, "from", 0, "finest period to try, 100 ns units (default: the finest the OS offers)")
	f.Uint32Var(&o.to, "to", 0, "coarsest period to try, 100 ns units (default: the coarsest)")
	f.BoolVar(&o.exhaustive, "exhaustive", false, "give every period the full sample count")
	f.StringVar(&o.raw, "raw", "", "write every sample of every period to this file (docs/raw-format.md)")
	f.StringVar(&o.simulate, "simulate", "", "run on the model of Windows timers: a scenario name, or list")
	f.Uint64Var(&o.seed, "seed", 1, "the sweep's random order (and with --simulate the model's seed)")
	return cmd
}

func (a *app) bench(cmd *cobra.Command, host seam.Host, o *benchOptions) error {
	prefs, err := o.judge.preferences()
	if err != nil {
		return err
	}
	if o.samples < 20 || o.samples > 1000 {
		return badFlag("samples", o.samples, "allowed 20..1000")
	}
	if err := rawfileCheck(o.raw); err != nil {
		return err
	}
	q, err := host.Query()
	if err != nil {
		return err
	}
	win := q.Windows
	if q.Linux != nil {
		return a.slackBench(cmd, host, q, o)
	}
	if win == nil {
		return fmt.Errorf("bench on %s: %w; try the Windows bench with --simulate", runtime.GOOS, seam.ErrUnsupported)
	}
	from, to := win.Finest100ns, win.Coarsest100ns
	if cmd.Flags().Changed("from") {
		from = o.from
	}
	if cmd.Flags().Changed("to") {
		to = o.to
	}
	for _, fl := range []struct {
		name  string
		value uint32
	}{{"from", from}, {"to", to}} {
		if fl.value < win.Finest100ns || fl.value > win.Coarsest100ns {
			return badFlag(fl.name, fl.value, "allowed %d..%d (100 ns units) on this machine", win.Finest100ns, win.Coarsest100ns)
		}
	}
	if from > to {
		return usagef("--from %d is above --to %d", from, to)
	}
	if win.Current100ns < win.Coarsest100ns && !win.ProcessHoldsRequest {
		a.warnf("%sthe timer is already held at %s ms by another process: candidates coarser than that cannot be seen and will be marked", simPrefix(o.simulate), timerinfo.FormatPeriodMS(win.Current100ns))
	}
	if o.simulate == "" {
		// One bench at a time: two would hold each other's requests.
		release, err := platform.Lock("bench")
		if err != nil {
			return err
		}
		defer release()
	}
	requests := sweep.Grid(win.Finest100ns, win.Coarsest100ns, from, to)
	what := "bench"
	if o.simulate != "" {
		what = "SIMULATED bench"
	}
	ctx, done := stoppable(cmd.Context())
	bar := newProgress(a.stderr, len(requests)*10, what+" (ESC or Ctrl+C stops early)")
	runner := &sweep.Runner{
		Host:     host,
		Plan:     sweep.Plan{Samples: o.samples, Exhaustive: o.exhaustive, Seed: o.seed, Prefs: prefs},
		Progress: bar.updateTotal,
	}
	points, err := runner.Run(ctx, requests)
	bar.finish()
	done()
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if len(points) == 0 {
		return fmt.Errorf("stopped before any period was measured")
	}
	file := newRawFile(rawfile.File{
		Command:   "bench",
		Simulated: o.simulate,
		Query:     q,
		Method:    "sleep",
		DelayNs:   int64(time.Millisecond),
		Bench:     &rawfile.BenchParams{Samples: o.samples, Exhaustive: o.exhaustive, Seed: o.seed, Requests: len(requests)},
		Points:    points,
	})
	b := report.BenchOf(file, sweep.JudgeFile(file, prefs))
	if err := b.Result.Usable(); err != nil {
		return err
	}
	if err := writeRaw(o.raw, file); err != nil {
		return err
	}
	b.RawFile = o.raw
	if b.Result.Partial {
		a.warnf("%sstopped early: the recommendation covers the periods measured so far", simPrefix(o.simulate))
	}
	if o.judge.asJSON {
		return writeJSON(a.stdout, b)
	}
	report.WriteBench(a.stdout, b, o.judge.rows)
	return nil
}

// slackBench is the Linux bench: the measuring thread's timer slack, and as
// root each value again with /dev/cpu_dma_latency held at 0.
func (a *app) slackBench(cmd *cobra.Command, host seam.Host, q *timerinfo.Report, o *benchOptions) error {
	for _, name := range []string{"from", "to", "exhaustive", "budget-p50", "budget-p95"} {
		if cmd.Flags().Changed(name) {
			return usagef("--%s is a Windows bench flag; the Linux bench sweeps timer slack (see --budget-lateness)", name)
		}
	}
	release, err := platform.Lock("bench")
	if err != nil {
		return err
	}
	defer release()
	settings := sweep.SlackGrid(q.Linux.Root)
	if !q.Linux.Root {
		a.hintf("run as root to also try each slack with /dev/cpu_dma_latency held at 0")
	}
	budget := int64(o.judge.budgetLateness)
	ctx, done := stoppable(cmd.Context())
	bar := newProgress(a.stderr, len(settings)*o.samples, "bench (ESC or Ctrl+C stops early)")
	runner := &sweep.Runner{Host: host, Plan: sweep.Plan{Samples: o.samples, Seed: o.seed}, Progress: bar.updateTotal}
	points, err := runner.RunSettings(ctx, "clock-abs", settings, func(points []rawfile.Point) int {
		return sweep.JudgeSlack(points, int64(time.Millisecond), sweep.Preferences{Prefer: o.judge.prefer, BudgetLateness: budget}).Recommended
	})
	bar.finish()
	done()
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if len(points) == 0 {
		return fmt.Errorf("stopped before any setting was measured")
	}
	file := newRawFile(rawfile.File{
		Command: "bench",
		Query:   q,
		Method:  "clock-abs",
		DelayNs: int64(time.Millisecond),
		Bench:   &rawfile.BenchParams{Samples: o.samples, Seed: o.seed, Requests: len(settings)},
		Points:  points,
	})
	if err := writeRaw(o.raw, file); err != nil {
		return err
	}
	b := report.SlackBenchOf(file, sweep.JudgeSlackFile(file, sweep.Preferences{Prefer: o.judge.prefer, BudgetLateness: budget}))
	b.RawFile = o.raw
	if b.Result.Partial {
		a.warnf("stopped early: the recommendation covers the settings measured so far")
	}
	if o.judge.asJSON {
		return writeJSON(a.stdout, b)
	}
	report.WriteSlackBench(a.stdout, b)
	return nil
}

func simPrefix(simulate string) string {
	if simulate != "" {
		return "SIMULATED: "
	}
	return ""
}
