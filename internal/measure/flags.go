package measure

import (
	"errors"
	"runtime"
	"time"

	"github.com/spf13/pflag"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/sweep"
)

// JudgeFlags are the judgement flags bench and analyze share.
type JudgeFlags struct {
	prefer               string
	budgetP50, budgetP95 time.Duration
	budgetLateness       time.Duration
	Rows, JSON           bool
}

// Register declares the flags on f, with sweep's defaults.
func (j *JudgeFlags) Register(f *pflag.FlagSet) {
	d := sweep.DefaultPreferences()
	f.StringVar(&j.prefer, "prefer", d.Prefer, "latency (lowest p50 that passes the gates) or power (coarsest band inside the budget)")
	f.DurationVar(&j.budgetP50, "budget-p50", time.Duration(d.BudgetP50), "with --prefer power: the p50 a band may reach")
	f.DurationVar(&j.budgetP95, "budget-p95", time.Duration(d.BudgetP95), "with --prefer power: the p95 a band may reach")
	f.DurationVar(&j.budgetLateness, "budget-lateness", time.Duration(d.BudgetLateness), "Linux, with --prefer power: the p99 lateness a setting may reach")
	f.BoolVar(&j.Rows, "rows", false, "print every measured period, with its interference")
	f.BoolVar(&j.JSON, "json", false, "print the whole result as JSON")
}

// Preferences checks the flags' values (Preferences).
func (j *JudgeFlags) Preferences() (sweep.Preferences, error) {
	return Preferences(j.prefer, j.budgetP50, j.budgetP95, j.budgetLateness)
}

// Simulation is --simulate and --seed: measure, bench and curve run on the
// model of Windows timers instead of this machine when a scenario is named.
type Simulation struct {
	Scenario string
	Seed     uint64
	// SeedOnMachine says the seed does something on this machine too
	// (bench's sweep order); elsewhere --seed needs --simulate.
	SeedOnMachine bool
	flags         *pflag.FlagSet
}

// Register declares --simulate and --seed on f; seedUsage says what else
// the seed does on that command.
func (s *Simulation) Register(f *pflag.FlagSet, seedUsage string) {
	f.StringVar(&s.Scenario, "simulate", "", "run on the model of Windows timers instead of this machine: a scenario name, or list")
	f.Uint64Var(&s.Seed, "seed", 1, seedUsage)
	s.flags = f
}

// Host is the host the flags name: machine without --simulate, else the
// model in the named scenario. It is nil, with no error, for --simulate
// list, whose answer is sim.Scenarios. A --seed that would do
// nothing (no model, no SeedOnMachine; or the list) is refused, as a flag
// that does not apply is everywhere.
func (s *Simulation) Host(machine seam.Host) (seam.Host, error) {
	seedGiven := s.flags != nil && s.flags.Changed("seed")
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
	flags   *pflag.FlagSet
}

// Register declares --load on f.
func (l *LoadFlag) Register(f *pflag.FlagSet) {
	f.IntVar(&l.Threads, "load", 0, options.LoadUsage)
	l.flags = f
}

// Host checks --load (options.Load: at most options.MaxLoadPerCPU a CPU,
// none on the model named by scenario) and returns host as measurements
// under the load see it, with the load, not yet started (nil for none).
func (l *LoadFlag) Host(host seam.Host, scenario string) (seam.Host, *sample.Load, error) {
	given := l.flags != nil && l.flags.Changed("load")
	if err := options.Load(l.Threads, runtime.NumCPU(), given, scenario); err != nil {
		return nil, nil, err
	}
	loaded, load, err := sample.Loaded(host, l.Threads, sample.CPUBound)
	if errors.Is(err, sample.ErrNoThreadClock) {
		return nil, nil, options.BadFlag("load", l.Threads, "not offered on %s: %v", runtime.GOOS, err)
	}
	return loaded, load, err
}
