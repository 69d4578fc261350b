package measure

import (
	"errors"
	"runtime"
	"time"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/sweep"
)

// JudgeFlags are the judgement flags bench and analyze share
// (--prefer, --budget-p50, --budget-p95, --budget-lateness, --rows,
// --json); cmd/tickscope gives sweep's defaults.
type JudgeFlags struct {
	Prefer               string
	BudgetP50, BudgetP95 time.Duration
	BudgetLateness       time.Duration
	Rows, JSON           bool
}

// Preferences checks the flags' values (Preferences).
func (j *JudgeFlags) Preferences() (sweep.Preferences, error) {
	return Preferences(j.Prefer, j.BudgetP50, j.BudgetP95, j.BudgetLateness)
}

// Simulation is --simulate and --seed: measure, bench and curve run on the
// model of Windows timers instead of this machine when a scenario is named.
type Simulation struct {
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
// list, whose answer is sim.Scenarios. A --seed that would do
// nothing (no model, no SeedOnMachine; or the list) is refused, as a flag
// that does not apply is everywhere.
func (s *Simulation) Host(machine seam.Host) (seam.Host, error) {
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
	model, err := sim.NewHost(s.Scenario, s.Seed)
	if err != nil {
		return nil, options.BadFlag("simulate", s.Scenario, "the scenarios are %s (or list)", sim.ScenarioNames())
	}
	return model, nil
}

// LoadFlag is --load: measure, bench and compare keep that many busy
// threads (sample.CPUBound) running beside the measurement on this
// machine.
type LoadFlag struct {
	Threads int
	// Given says --load was given (--load 0 too).
	Given bool
}

// Host checks --load (options.Load: at most options.MaxLoadPerCPU a CPU,
// none on the model named by scenario) and returns host as measurements
// under the load see it, with the load, not yet started (nil for none).
func (l *LoadFlag) Host(host seam.Host, scenario string) (seam.Host, *sample.Load, error) {
	if err := options.Load(l.Threads, runtime.NumCPU(), l.Given, scenario); err != nil {
		return nil, nil, err
	}
	loaded, load, err := sample.Loaded(host, l.Threads, sample.CPUBound)
	if errors.Is(err, sample.ErrNoThreadClock) {
		return nil, nil, options.BadFlag("load", l.Threads, "not offered on %s: %v", runtime.GOOS, err)
	}
	return loaded, load, err
}
