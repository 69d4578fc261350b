package main

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/platform"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

func (a *app) globalCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "global on|off",
		Short: "Windows: write or remove GlobalTimerResolutionRequests (elevated; takes effect after a reboot)",
		Long: `Windows: make timer-resolution requests global again (on), or per-process
(off), by writing or removing one registry value and nothing else:

  ` + `HKLM\SYSTEM\CurrentControlSet\Control\Session Manager\kernel
  GlobalTimerResolutionRequests = 1 (REG_DWORD)

Only Windows 11 and Server 2022 or later read it; Windows 10 client builds
ignore it, and tickscope warns there. It takes effect after a reboot. It needs
an elevated terminal. Running it twice changes nothing the second time.
` + "`tickscope verify-global`" + ` then measures whether requests reach other processes.`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return usagef("tickscope global needs one argument: on or off")
			case len(args) > 1:
				return usagef("tickscope global takes one argument, on or off, got %d: %q", len(args), args)
			case args[0] != "on" && args[0] != "off":
				return usagef("tickscope global %q: allowed on or off", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return a.global(args[0] == "on", asJSON) },
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON (docs/json.md)")
	return cmd
}

// globalResult is what global prints as JSON.
type globalResult struct {
	Key    string  `json:"key"`
	Before *uint32 `json:"before"`
	After  *uint32 `json:"after"`
	// Changed is false when the value already was what was asked.
	Changed bool `json:"changed"`
	// BuildHonoursKey is false on builds that ignore the value.
	BuildHonoursKey bool   `json:"build_honours_key"`
	RequestModel    string `json:"request_model_after_reboot"`
	Undo            string `json:"undo,omitempty"`
}

func (a *app) global(on, asJSON bool) error {
	host := machineHost()
	q, err := host.Query()
	if err != nil {
		return err
	}
	if q.Windows == nil {
		return usagef("tickscope global: GlobalTimerResolutionRequests is a Windows registry value; %s has no global timer request (tickscope verify-global says what it has)", runtime.GOOS)
	}
	before := platform.GlobalRequests()
	res := globalResult{Key: timerinfo.GlobalRequestsKey, Before: before, BuildHonoursKey: q.Windows.Build >= timerinfo.Build20348}
	already := (before != nil && *before == 1) == on && (on || before == nil)
	if !already {
		if !platform.Elevated() {
			return errors.New("changing " + timerinfo.GlobalRequestsKey + " needs elevation: run from an elevated terminal (nothing was changed)")
		}
		if err := platform.SetGlobalRequests(on); err != nil {
			return err
		}
		res.Changed = true
	}
	res.After = platform.GlobalRequests()
	if (res.After != nil && *res.After == 1) != on {
		return fmt.Errorf("%s reads %s after the change", timerinfo.GlobalRequestsKey, report.RegistryValue(res.After))
	}
	res.RequestModel = timerinfo.RequestModelFor(q.Windows.Build, res.After)
	if res.Changed {
		res.Undo = "tickscope global off"
		if !on {
			res.Undo = "tickscope global on"
		}
	}
	if !res.BuildHonoursKey && on {
		a.warnf("this build (%s, %s) ignores GlobalTimerResolutionRequests: only Windows 11 and Server 2022 or later read it, so requests stay %s",
			q.Windows.Version, q.Windows.Product, map[bool]string{true: "global (as before Windows 10 2004)", false: "per-process"}[q.Windows.Build < timerinfo.Build19041])
	}
	if asJSON {
		return writeJSON(a.stdout, res)
	}
	switch {
	case !res.Changed:
		fmt.Fprintf(a.stdout, "%s is already %s; nothing was changed\n", res.Key, report.RegistryValue(res.After))
	case on:
		fmt.Fprintf(a.stdout, "set %s = 1\n", res.Key)
	default:
		fmt.Fprintf(a.stdout, "removed %s (it was %s)\n", res.Key, report.RegistryValue(before))
	}
	if res.Changed {
		fmt.Fprintln(a.stdout, "it takes effect after a reboot")
		fmt.Fprintf(a.stdout, "after the reboot: %s\n", res.RequestModel)
		fmt.Fprintf(a.stdout, "undo: %s\n", res.Undo)
	}
	return nil
}
