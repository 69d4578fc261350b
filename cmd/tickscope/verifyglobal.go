package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/hold"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// childSamples is how many Sleep(1) waits the child measures: at the
// 15.625 ms default, about 0.6 s.
const childSamples = 40

func (a *app) verifyGlobalCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "verify-global",
		Short: "Windows: measure whether a request in one process speeds up another",
		Long: `Windows: does a timer request in one process affect another process's waits
on this machine right now? It needs the timer at rest: when something already
holds a finer period it reports "inconclusive", names that period, and exits 1.

Otherwise a child (this executable, running measure) measures Sleep(1) with no
request of its own, twice: with nothing held, then while this process holds
the finest period. It reports "global" or "per-process" with both figures.
Nothing outlives the command.

Linux has no global tick request; there it says what the equivalents are.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.verifyGlobal(cmd.Context(), asJSON) },
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON (docs/json.md)")
	return cmd
}

func (a *app) verifyGlobal(ctx context.Context, asJSON bool) error {
	sys := machineSystem()
	res, err := hold.VerifyGlobal(ctx, machineHost(), sys, func(ctx context.Context) (int64, error) { return a.childSleepP50(ctx, sys) })
	if err != nil {
		return err
	}
	if asJSON {
		if err := writeJSON(a.stdout, res); err != nil {
			return err
		}
	} else {
		report.WriteGlobalCheck(a.stdout, res)
	}
	if res.Verdict == timerinfo.VerdictInconclusive {
		return &exitCode{code: 1}
	}
	return nil
}

// childSleepP50 runs this executable's measure of Sleep(1) in a child
// process and returns its p50.
func (a *app) childSleepP50(ctx context.Context, sys seam.System) (int64, error) {
	exe, err := sys.Executable()
	if err != nil {
		return 0, &seam.OSError{Call: "find this executable", Err: err}
	}
	child := exec.CommandContext(ctx, exe, "measure", "--method", "sleep", "--delay", "1ms", "--samples", strconv.Itoa(childSamples), "--json")
	child.Stderr = a.stderr
	out, err := child.Output()
	if err != nil {
		return 0, &seam.OSError{Call: "the child measurement (" + exe + " measure)", Err: err}
	}
	var m report.Measurement
	if err := json.Unmarshal(out, &m); err != nil || m.Summary.P50 == 0 {
		return 0, fmt.Errorf("the child measurement printed no p50: %v", err)
	}
	return m.Summary.P50, nil
}
