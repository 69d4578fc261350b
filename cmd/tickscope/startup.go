package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/platform"
)

func (a *app) startupCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "startup",
		Short: "Manage the startup holder that apply --persist installs",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("tickscope startup needs a subcommand: remove")
		},
	}
	var asJSON bool
	remove := &cobra.Command{
		Use:   "remove",
		Short: "End the startup holder and delete what apply --persist installed",
		Long: `End a running startup holder, delete the Task Scheduler task "tickscope"
(Windows) or the systemd unit tickscope-holder.service (Linux), and warn when
the timer setting is still raised afterwards (another program holds one).

A task or unit of that name that tickscope did not create is left alone, and
the command that deletes it by hand is printed. With nothing installed it
says so and changes nothing.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.startupRemove(asJSON) },
	}
	remove.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON (docs/json.md)")
	cmd.AddCommand(remove)
	return cmd
}

type removeResult struct {
	Startup   string `json:"startup"`
	Installed bool   `json:"installed"`
	HolderPID int    `json:"holder_pid"`
	Ended     bool   `json:"ended"`
	Deleted   bool   `json:"deleted"`
	// StillRaised describes a setting still in force afterwards, or "".
	StillRaised string `json:"still_raised"`
}

func (a *app) startupRemove(asJSON bool) error {
	st := platform.StartupHolder()
	if st == nil {
		return usagef("tickscope startup remove: %s has no startup holder", runtime.GOOS)
	}
	res := removeResult{Startup: st.Describe()}
	definition, err := st.Read()
	if err != nil {
		return err
	}
	if definition != nil {
		installed, err := parseInstalled(definition)
		if err != nil || !installed.Ours() {
			return fmt.Errorf("the %s was not created by tickscope: it is left alone; delete it by hand with: %s", st.Describe(), st.DeleteByHand())
		}
		res.Installed = true
	}
	// HolderRunning is -1 for a holder whose process id is unreadable:
	// Stop reports that instead of passing over it.
	running := platform.HolderRunning()
	res.HolderPID = max(running, 0)
	if running != 0 || res.Installed {
		if err := st.Stop(); err != nil {
			return err
		}
		res.Ended = running != 0
	}
	if res.Installed {
		if err := st.Delete(); err != nil {
			return err
		}
		res.Deleted = true
	}
	if q, err := machineHost().Query(); err == nil {
		res.StillRaised = q.StillRaised()
	}
	if asJSON {
		return writeJSON(a.stdout, res)
	}
	if !res.Installed && !res.Ended {
		fmt.Fprintf(a.stdout, "nothing to remove: no %s is installed and no holder runs\n", st.Describe())
	}
	if res.Ended {
		fmt.Fprintf(a.stdout, "ended the holder (process %d)\n", res.HolderPID)
	}
	if res.Deleted {
		fmt.Fprintf(a.stdout, "deleted the %s\n", st.Describe())
	}
	if res.StillRaised != "" {
		a.warnf("%s", res.StillRaised)
	}
	return nil
}
