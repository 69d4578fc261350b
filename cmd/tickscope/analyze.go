package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/bench"
	"github.com/tickscope/tickscope/internal/explain"
	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/sim"
)

// rawLimits are what every raw file tickscope reads or writes is held to:
// a simulated file names one of the model's scenarios.
func rawLimits() rawfile.Limits { return rawfile.Limits{Scenarios: sim.ScenarioNameList()} }

func (a *app) analyzeCommand() *cobra.Command {
	var j bench.JudgeFlags
	cmd := &cobra.Command{
		Use:     "analyze FILE",
		Aliases: []string{"report"},
		Short:   "Re-judge a raw-samples file from bench, measure, curve or compare",
		Long: `Recompute a result from a raw-samples file (--raw of bench, measure, curve or
compare), so that a run can be shared and anyone can re-judge it.

A bench's file gives exactly the bench's result under the same --prefer and
budgets; a measure file gets its summary, a curve file its curve, a compare
file its matrix, and explain's file (a measure file with its attribution)
explain's report again, text or --json, as explain printed it. A missing,
damaged, oversized or future-version file, or a bench flag on another
file, exits 2 saying what and where (limits: docs/raw-format.md).`,
		Example: `  tickscope bench --raw bench.json
  tickscope analyze bench.json
  # the same samples judged for power, drawn as HTML
  tickscope analyze bench.json --prefer power --html power.html`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return options.Usagef("analyze takes one FILE, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			prefs, err := j.Preferences()
			if err != nil {
				return err
			}
			f, err := rawfile.ReadFile(cmd.Context(), args[0], rawLimits())
			if err != nil {
				return options.FileError(args[0], err)
			} else if err := bench.CheckFileFlags(f, options.Value(args[0]), cmd.Flags().Changed); err != nil {
				return err
			}
			if f.Explain != nil {
				// explain's file: its report again, as explain printed it.
				res, worst, err := explain.FromFile(f)
				if err != nil {
					return options.FileError(args[0], err)
				}
				return writeOutputs(cmd, f, res.Page(worst), a.emit(j.JSON, res, func(w io.Writer) { res.WriteText(w, worst) }))
			}
			r := report.Print(f, report.Judging{Prefs: prefs, Rows: j.Rows})
			return writeOutputs(cmd, f, r.Value, a.emit(j.JSON, r.Value, r.Text))
		},
	}
	registerJudge(cmd.Flags(), &j)
	registerOutputs(cmd, false)
	return cmd
}
