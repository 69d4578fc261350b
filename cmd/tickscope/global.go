package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/global"
	"github.com/tickscope/tickscope/internal/options"
)

func (a *app) globalCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "global on|off",
		Short: "Windows: write or remove GlobalTimerResolutionRequests (elevated; takes effect after a reboot)",
		Long: `Windows: make timer-resolution requests global again (on), or per-process
(off), by writing or removing one registry value and nothing else.

  ` + `HKLM\SYSTEM\CurrentControlSet\Control\Session Manager\kernel
  GlobalTimerResolutionRequests = 1 (REG_DWORD)

Only Windows 11 and Server 2022 or later read it; Windows 10 client builds
ignore it, and tickscope warns there. It takes effect after a reboot. It needs
an elevated terminal. Running it twice changes nothing the second time.
` + "`tickscope verify-global`" + ` then measures whether requests reach other processes.`,
		Example: `  # in an elevated terminal, then reboot
  tickscope global on
  tickscope verify-global
  # back to per-process requests
  tickscope global off`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return options.Usagef("tickscope global needs one argument: on or off")
			case len(args) > 1:
				return options.Usagef("tickscope global takes one argument, on or off, got %d: %q", len(args), args)
			case args[0] != "on" && args[0] != "off":
				return options.Usagef("tickscope global %q: allowed on or off", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return a.global(args[0] == "on", asJSON) },
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON (docs/json.md)")
	return cmd
}

func (a *app) global(on, asJSON bool) error {
	q, err := machineHost().Query()
	if err != nil {
		return err
	}
	res, err := global.SetGlobal(q, machineSystem(), on)
	if err != nil {
		return err
	}
	if res.Warning != "" {
		a.warnf("%s", res.Warning)
	}
	return a.emit(asJSON, res, func(w io.Writer) { global.WriteGlobal(w, res) })
}
