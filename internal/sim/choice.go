package sim

import (
	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/seam"
)

// Choice is --simulate and --seed: measure, bench and curve run on the
// model of Windows timers instead of this machine when a scenario is named.
type Choice struct {
	Scenario string
	Seed     uint64
	// SeedSet says --seed was given.
	SeedSet bool
	// SeedOnMachine says the seed does something on this machine too
	// (bench's sweep order); elsewhere --seed needs --simulate.
	SeedOnMachine bool
}

// Host is the host the flags name: machine without --simulate, else the
// model in the named scenario. It is nil, with no error, for --simulate
// list, whose answer is Scenarios. A --seed that would do
// nothing (no model, no SeedOnMachine; or the list) is refused, as a flag
// that does not apply is everywhere.
func (s *Choice) Host(machine seam.Host) (seam.Host, error) {
	seedGiven := s.SeedSet
	switch s.Scenario {
	case "":
		if seedGiven && !s.SeedOnMachine {
			return nil, options.BadFlag("seed", s.Seed, "the model's seed, used only with --simulate; this machine's waits take none")
		}
		return machine, nil
	case "list":
		if seedGiven {
			return nil, options.BadFlag("seed", s.Seed, "the model's seed; --simulate list runs nothing and takes none")
		}
		return nil, nil
	}
	model, err := NewHost(s.Scenario, s.Seed)
	if err != nil {
		return nil, options.BadFlag("simulate", s.Scenario, "the scenarios are %s (or list)", ScenarioNames())
	}
	return model, nil
}
