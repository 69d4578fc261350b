package main

import (
	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
)

// onHost declares --simulate and --seed on cmd and makes cmd run measure on
// the host they name: this machine, or the model. --simulate list prints
// the scenarios instead.
func (a *app) onHost(cmd *cobra.Command, simulation *sim.Choice, seedUsage string, run func(*cobra.Command, seam.Host) error) {
	registerSimulation(cmd.Flags(), simulation, seedUsage)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		host, err := simulation.Host(machineHost())
		if host == nil && err == nil {
			report.WriteScenarios(a.stdout, sim.Scenarios())
			return nil
		} else if err != nil {
			return err
		}
		return run(cmd, host)
	}
}
