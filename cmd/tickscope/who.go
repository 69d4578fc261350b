package main

import (
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/inspect"
	"github.com/tickscope/tickscope/internal/term"
)

func (a *app) whoCommand() *cobra.Command {
	var asJSON bool
	var watch time.Duration
	cmd := &cobra.Command{
		Use:   "who",
		Short: "Name the processes that hold the timer (Windows: elevated), and what they hold",
		Long:  inspect.WhoHelp,
		Example: `  # Windows, in an elevated terminal: who holds the timer now
  tickscope who
  # keep watching for ten minutes, then sum up who held what for how long
  tickscope who --watch 10m`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := inspect.CheckWatch(cmd.Flags().Changed("watch"), watch); err != nil {
				return err
			}
			ctx, done := term.Stoppable(cmd.Context())
			defer done()
			var show inspect.WhoShow
			if !asJSON {
				show = &inspect.WhoText{W: a.stdout}
			}
			rep, err := inspect.Who(ctx, machineHost(), machineSystem(), watch, show)
			if err != nil {
				return err
			}
			return a.emit(asJSON, rep, func(w io.Writer) { inspect.WriteWhoSummary(w, rep) })
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON (docs/json.md)")
	cmd.Flags().DurationVar(&watch, "watch", 0, "keep watching for this long (or until ESC or Ctrl+C), printing each change, then sum up")
	return cmd
}
