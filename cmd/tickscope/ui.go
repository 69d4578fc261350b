package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/ui"
)

func (a *app) uiCommand() *cobra.Command {
	var sim sim.Choice
	var noBrowser bool
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "A dashboard in the browser: the timer live, and measure, bench, hold, persist and global as buttons",
		Long: `Serve a dashboard on 127.0.0.1 (a free port) and open it in the default
browser: the timer's state, updated every second, and buttons for measure,
bench, apply, apply --persist, startup remove and global on|off, each showing
the command line that does the same and refused with the same words.

The address carries a secret token of this run: keep it to yourself. Closing
the page ends nothing; Ctrl+C (or the tray icon's Quit, on Windows) quits and
releases what the page holds, but not the startup holder.
--simulate runs the page on the model of Windows timers, changing nothing.
ui has no --json: the page's own JSON (its state and each action's answer)
is documented in docs/json.md.`,
		Example: `  tickscope ui
  # on the model of Windows timers, the address printed instead of opened
  tickscope ui --simulate game-session --no-browser`,
		Args: noArgs,
	}
	a.onHost(cmd, &sim, "with --simulate: the model's random seed", func(cmd *cobra.Command, host seam.Host) error {
		return a.ui(cmd.Context(), host, sim, noBrowser)
	})
	cmd.Flags().BoolVar(&noBrowser, "no-browser", false, "print the page's address instead of opening the browser")
	return cmd
}

func (a *app) ui(ctx context.Context, host seam.Host, sim sim.Choice, noBrowser bool) error {
	return ui.Run(ctx, ui.Options{Host: host, System: machineSystem(), Shell: machineShell(), Scenario: sim.Scenario, Seed: sim.Seed,
		NoBrowser: noBrowser, Tray: true, Stdout: a.stdout, Stderr: a.stderr})
}
