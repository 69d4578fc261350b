package main

import (
	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/sweep"
)

func (a *app) analyzeCommand() *cobra.Command {
	var j judgeFlags
	cmd := &cobra.Command{
		Use:   "analyze FILE",
		Short: "Re-judge a raw-samples file from bench, measure or curve",
		Long: `Recompute a result from a raw-samples file (--raw of bench or measure), so
that a run can be shared and anyone can re-judge it. A bench's file gives
exactly the bench's result under the same --prefer and budgets; a measure
file gets its summary, a curve file its curve, a compare file its matrix. A missing, damaged or future-version file exits 2,
saying what and where.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("analyze takes one FILE, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			prefs, err := j.preferences()
			if err != nil {
				return err
			}
			f, err := rawfile.ReadFile(args[0])
			if err != nil {
				return usagef("%s: %v", args[0], err)
			}
			if f.Command == "compare" {
				c := report.CompareOf(f, nil, nil)
				if j.asJSON {
					return writeJSON(a.stdout, c)
				}
				report.WriteCompare(a.stdout, c)
				return nil
			}
			if f.Command == "curve" {
				c := report.CurveOf(f)
				if j.asJSON {
					return writeJSON(a.stdout, c)
				}
				report.WriteCurve(a.stdout, c)
				return nil
			}
			if f.Bench == nil {
				m := report.MeasurementOf(f, &f.Points[0])
				if j.asJSON {
					return writeJSON(a.stdout, m)
				}
				report.WriteMeasurement(a.stdout, m)
				return nil
			}
			if f.Query.Linux != nil {
				b := report.SlackBenchOf(f, sweep.JudgeSlackFile(f, prefs))
				if j.asJSON {
					return writeJSON(a.stdout, b)
				}
				report.WriteSlackBench(a.stdout, b)
				return nil
			}
			b := report.BenchOf(f, sweep.JudgeFile(f, prefs))
			if j.asJSON {
				return writeJSON(a.stdout, b)
			}
			report.WriteBench(a.stdout, b, j.rows)
			return nil
		},
	}
	j.register(cmd.Flags())
	return cmd
}
