package main

import (
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/winmodel"
)

// hostFor returns the host a command measures: this machine, or the model
// of Windows timers when --simulate names a scenario. listed is set when
// --simulate list was answered and there is nothing to measure.
func (a *app) hostFor(simulate string, seed uint64, machine seam.Host) (host seam.Host, listed bool, err error) {
	switch simulate {
	case "":
		return machine, false, nil
	case "list":
		report.WriteScenarios(a.stdout, winmodel.Scenarios())
		return nil, true, nil
	}
	model, err := winmodel.New(simulate, seed)
	if err != nil {
		return nil, false, badFlag("simulate", simulate, "the scenarios are %s (or list)", winmodel.Names())
	}
	return model, false, nil
}
