package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"
	"github.com/tickscope/tickscope/internal/inspect"
)

func (a *app) statusCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "What a wait takes in this process now, the timer state, and the startup holder",
		Long: `Show in one place what a wait takes now, the timer state and the startup holder.

  - what the default 1 ms wait takes in this process now, measured briefly,
    without a request of its own and with one (Windows: the finest period;
    Linux: timer slack 1 ns);
  - what query reports;
  - the startup holder that apply --persist installs: installed or not,
    running or not and whether the timer is at what it holds, the setting,
    the windowless holder's last logged line (Windows), and "stale" when it
    runs another executable than this tickscope's holder;
  - on Windows, the boot service that apply --persist --boot installs:
    installed or not (and whether by tickscope), what it runs and as whom,
    its state as the service manager reports it, its process, and how it
    last stopped when that was not cleanly.

It changes nothing: the request it measures with is released at once.`,
		Example: `  tickscope status
  tickscope status --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.status(cmd.Context(), asJSON) },
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON (docs/json.md)")
	return cmd
}

func (a *app) status(ctx context.Context, asJSON bool) error {
	rep, err := inspect.Status(ctx, machineHost(), machineSystem())
	if err != nil {
		return err
	}
	return a.emit(asJSON, rep, func(w io.Writer) { inspect.WriteStatus(w, rep) })
}
