package main

import (
	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/winmodel"
)

// simulation is --simulate and --seed: measure, bench and curve run on the
// model of Windows timers instead of this machine when a scenario is named.
type simulation struct {
	scenario string
	seed     uint64
}

// onHost declares --simulate and --seed on cmd (seedUsage says what else
// the seed does there) and makes cmd run measure on the host they name:
// this machine, or the model. --simulate list prints the scenarios
// instead.
func (a *app) onHost(cmd *cobra.Command, sim *simulation, seedUsage string, measure func(*cobra.Command, seam.Host) error) {
	cmd.Flags().StringVar(&sim.scenario, "simulate", "", "run on the model of Windows timers instead of this machine: a scenario name, or list")
	cmd.Flags().Uint64Var(&sim.seed, "seed", 1, seedUsage)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		switch sim.scenario {
		case "":
			return measure(cmd, machineHost())
		case "list":
			report.WriteScenarios(a.stdout, winmodel.Scenarios())
			return nil
		}
		model, err := winmodel.New(sim.scenario, sim.seed)
		if err != nil {
			return options.BadFlag("simulate", sim.scenario, "the scenarios are %s (or list)", winmodel.Names())
		}
		return measure(cmd, model)
	}
}
