package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/report"
)

func (a *app) queryCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "query",
		Short: "Print what the OS reports about its timers; changes nothing",
		Long: `Print what the OS reports about its timers; it changes nothing.

Windows: the coarsest, finest and current timer period, whether this process
holds a request, the version and build, which request model applies (global or
per-process), GlobalTimerResolutionRequests, elevation, the bcdedit timer
settings (read only when elevated), DisableUserPresenceQos and the QPC
frequency. A warning names the period when something already holds the timer
finer than the coarsest.

Linux: kernel and preemption model, HZ, high-resolution timers, NO_HZ,
clocksource, this thread's timer slack, /dev/cpu_dma_latency (root), cpuidle
driver, governor and states, privileges and CPUs.

--json prints the same as the object documented in docs/json.md.`,
		Example: `  tickscope query
  tickscope query --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep, err := machineHost().Query()
			if err != nil {
				return err
			}
			return a.emit(asJSON, rep, func(w io.Writer) { report.WriteQuery(w, rep) })
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON (docs/json.md)")
	return cmd
}
