package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tickscope/tickscope/internal/bench"
	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/outputs"
	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/sweep"
)

// The flags the measurement commands share, declared into measure's
// typed options, which check them.

// registerJudge declares the judgement flags of bench and analyze on f,
// with sweep's defaults.
func registerJudge(f *pflag.FlagSet, j *bench.JudgeFlags) {
	d := sweep.DefaultPreferences()
	f.StringVar(&j.Prefer, "prefer", d.Prefer, "latency (lowest p50 that passes the gates) or power (coarsest band inside the budget)")
	f.DurationVar(&j.BudgetP50, "budget-p50", time.Duration(d.BudgetP50), "with --prefer power: the p50 a band may reach")
	f.DurationVar(&j.BudgetP95, "budget-p95", time.Duration(d.BudgetP95), "with --prefer power: the p95 a band may reach")
	f.DurationVar(&j.BudgetLateness, "budget-lateness", time.Duration(d.BudgetLateness), "Linux, with --prefer power: the p99 lateness a setting may reach")
	f.BoolVar(&j.Rows, "rows", false, "print every measured period, with its interference")
	f.BoolVar(&j.JSON, "json", false, "print the whole result as JSON")
}

// registerSimulation declares --simulate and --seed on f, into s;
// seedUsage says what else the seed does on that command.
func registerSimulation(f *pflag.FlagSet, s *sim.Choice, seedUsage string) {
	f.StringVar(&s.Scenario, "simulate", "", "run on the model of Windows timers instead of this machine: a scenario name, or list")
	f.Uint64Var(&s.Seed, "seed", 1, seedUsage)
	markGiven(f, "seed", &s.SeedSet)
}

// registerLoad declares --load on f, into l.
func registerLoad(f *pflag.FlagSet, l *sample.LoadRequest) {
	f.IntVar(&l.Threads, "load", 0, options.LoadUsage)
	markGiven(f, "load", &l.Given)
}

type outputsKey struct{}

// registerOutputs adds --html to cmd (and with cyclictest, --cyclictest-json
// and --histfile) and wraps its RunE so that the files are checked
// (outputs.Files.Distinct) and opened before it runs and their
// temporaries removed after; writeOutputs writes them. It must be called
// after cmd.RunE is set.
func registerOutputs(cmd *cobra.Command, cyclictest bool) {
	o := &outputs.Files{}
	f := cmd.Flags()
	f.StringVar(&o.HTML, "html", "", "also draw the result as a self-contained HTML page (charts and their numbers) in this file")
	if cyclictest {
		f.StringVar(&o.CyclictestJSON, "cyclictest-json", "", "also write the measurement in cyclictest --json's format (lateness in µs) to this file")
		f.StringVar(&o.Histfile, "histfile", "", "also write cyclictest -h's text histogram (lateness, 1 µs buckets) to this file")
	}
	run := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		var raw string
		if f := cmd.Flags().Lookup("raw"); f != nil {
			raw = f.Value.String()
		}
		if err := o.Distinct(raw, args); err != nil {
			return err
		}
		if err := o.Open(); err != nil {
			return err
		}
		defer o.Close()
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		cmd.SetContext(context.WithValue(ctx, outputsKey{}, o))
		return run(cmd, args)
	}
}

// writeOutputs writes the files registered on cmd (outputs.Write)
// for the raw file f and the command's result, after the command printed
// it: err is the printing's error, returned first.
func writeOutputs(cmd *cobra.Command, f *rawfile.File, result any, err error) error {
	var o *outputs.Files
	if ctx := cmd.Context(); ctx != nil {
		o, _ = ctx.Value(outputsKey{}).(*outputs.Files)
	}
	return outputs.Write(o, f, result, err)
}
