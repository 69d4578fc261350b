package main

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tickscope/tickscope/internal/hold"
)

// holderCommand is the startup holder's and the boot service's own entry
// point, which the Task Scheduler task, the systemd unit and the Windows
// service run (hold.PlanApply writes their command lines). It is hidden:
// people hold with apply, whose flags stay the ones a person gives. It
// holds as apply does, as the startup holder (status reports it, startup
// remove ends it), or with --as-service under the service manager.
func (a *app) holderCommand() *cobra.Command {
	var f hold.ApplyFlags
	cmd := &cobra.Command{
		Use:    "holder",
		Short:  "The startup holder's and the boot service's own command (not for people: use apply)",
		Hidden: true,
		Example: `  # what the logon task runs
  tickscope-holder.exe holder --resolution 10000 --no-console --no-esc
  # what the boot service runs
  tickscope.exe holder --as-service --resolution 10000 --no-esc`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.AsStartup = !f.AsService
			return a.apply(cmd, machineHost(), machineSystem(), f, false)
		},
	}
	registerHolder(cmd.Flags(), &f)
	return cmd
}

// registerHolder declares the holder's flags on fl, into f: the settings
// apply holds, --while and --while-user, the console and ESC, and
// --as-service.
func registerHolder(fl *pflag.FlagSet, f *hold.ApplyFlags) {
	registerHeldSetting(fl, f)
	fl.BoolVar(&f.NoConsole, "no-console", false, "Windows: detach from the console while holding")
	markGiven(fl, "no-console", &f.NoConsoleSet)
	fl.BoolVar(&f.NoEsc, "no-esc", false, "do not watch the ESC key")
	fl.BoolVar(&f.AsService, "as-service", false, "Windows: hold as the boot service, under the service manager")
	markGiven(fl, "as-service", &f.AsServiceSet)
	registerWhile(fl, f)
}
