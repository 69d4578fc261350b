package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/hold"
	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/startup"
)

func (a *app) startupCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "startup",
		Short: "Manage the startup holder that apply --persist installs",
		Example: `  tickscope status
  tickscope startup remove`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return options.Usagef("tickscope startup needs a subcommand: remove")
		},
	}
	var asJSON bool
	remove := &cobra.Command{
		Use:   "remove",
		Short: "End the startup holder and delete what apply --persist installed",
		Long: `End a running startup holder, delete the Task Scheduler task "tickscope"
(Windows) or the systemd unit tickscope-holder.service (Linux), and warn when
the timer setting is still raised afterwards (another program holds one).

On Windows it also stops the service "tickscope" that apply --persist --boot
installed, which releases its setting, and deletes it: that needs an
elevated tickscope. Without one, or when a service of that name is not
tickscope's, the service is left as it was and the error says why, the
task is removed all the same, and the exit status is 1.

A task or unit of that name that tickscope did not create is left alone,
and the command that deletes it by hand is printed; then nothing else is
changed either. With nothing installed it says so and changes nothing.
The exit status is 0 only when everything found was removed.`,
		Example: `  tickscope startup remove
  tickscope startup remove --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.startupRemove(asJSON) },
	}
	remove.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON (docs/json.md)")
	cmd.AddCommand(remove)
	return cmd
}

func (a *app) startupRemove(asJSON bool) error {
	res, err := startup.RemoveStartup(machineHost(), machineSystem())
	if err != nil {
		return err
	}
	if err := a.emit(asJSON, res, func(w io.Writer) { startup.WriteRemove(w, res) }); err != nil || asJSON {
		return err
	}
	if res.StillRaised != "" {
		a.warnf("%s", res.StillRaised)
	}
	if left := res.NotDone(); left != "" {
		return &hold.ExitStatus{Code: 1, Msg: left}
	}
	return nil
}
