package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/global"
	"github.com/tickscope/tickscope/internal/hold"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

func (a *app) verifyGlobalCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "verify-global",
		Short: "Windows: measure whether a request in one process speeds up another",
		Long: `Windows: measure whether a timer request in one process affects another
process's waits on this machine right now.

It needs the timer at rest: when something already
holds a finer period it reports "inconclusive", names that period, and exits 1.

Otherwise a child (this executable, running measure) measures Sleep(1) with no
request of its own, twice: with nothing held, then while this process holds
the finest period. It reports "global" or "per-process" with both figures.
Nothing outlives the command.

Linux has no global tick request; there it says what the equivalents are.`,
		Example: `  tickscope verify-global
  tickscope verify-global --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.verifyGlobal(cmd.Context(), asJSON) },
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON (docs/json.md)")
	return cmd
}

func (a *app) verifyGlobal(ctx context.Context, asJSON bool) error {
	sys := machineSystem()
	res, err := global.VerifyGlobal(ctx, machineHost(), sys, global.ChildMeasure(sys, a.stderr))
	if err != nil {
		return err
	}
	if err := a.emit(asJSON, res, func(w io.Writer) { global.WriteGlobalCheck(w, res) }); err != nil {
		return err
	}
	if res.Verdict == timerinfo.VerdictInconclusive {
		return &hold.ExitStatus{Code: 1}
	}
	return nil
}
