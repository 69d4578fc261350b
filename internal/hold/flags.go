package hold

import (
	"time"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// The options of apply and run as typed values, each with whether it was
// given: cmd/tickscope fills them from its flags, tickscope ui's forms
// from their JSON, and both check them here, so that a value is refused
// in the same words.

// RunFlags is run's setting.
type RunFlags struct {
	Resolution    uint32
	ResolutionSet bool
	MS            float64
	MSSet         bool
	Slack         time.Duration
	SlackSet      bool
	DMALatency    int32
	DMALatencySet bool
}

// CheckRun refuses, as usage errors, the settings of run that were given
// and the OS q describes does not have.
func CheckRun(q *timerinfo.Report, f RunFlags) error {
	if err := options.WindowsOnly(q, options.Instead("--slack", "--dma-latency"), options.Flag{Name: "resolution", Value: f.Resolution, Given: f.ResolutionSet}, options.Flag{Name: "ms", Value: f.MS, Given: f.MSSet}); err != nil {
		return err
	}
	return options.LinuxOnly(q, options.Flag{Name: "slack", Value: f.Slack, Given: f.SlackSet}, options.Flag{Name: "dma-latency", Value: f.DMALatency, Given: f.DMALatencySet})
}

// ApplyFlags is what apply is asked: each value, and for those whose
// absence matters, whether it was given.
type ApplyFlags struct {
	Resolution    uint32
	ResolutionSet bool
	MS            float64
	MSSet         bool
	DMALatency    int32
	DMALatencySet bool
	PID           int
	PIDSet        bool
	Slack         time.Duration
	SlackSet      bool
	For           time.Duration
	ForSet        bool
	NoConsole     bool
	NoConsoleSet  bool
	NoEsc         bool
	Persist       bool
	DryRun        bool
	AsStartup     bool
	// Boot is --boot: --persist installs the Windows service that holds
	// from boot; AsService is --as-service, the service's own command line.
	Boot         bool
	AsService    bool
	AsServiceSet bool
	// Listen is --listen ADDR: the holder's state on a Prometheus endpoint.
	Listen string
	// While is --while PROGRAM[,PROGRAM...]: hold only while one of them
	// runs.
	While    string
	WhileSet bool
	// WhileUser is --while-user USER: count only that user's processes.
	WhileUser    string
	WhileUserSet bool
	// Simulated is set when the hold runs on the model (--simulate).
	Simulated bool
}

// WhileUsage is --while's help, which tickscope ui's Hold form also
// names when it is given empty.
const WhileUsage = "hold only while one of these programs runs: PROGRAM[,PROGRAM...], each a name (game.exe; on Windows game is game.exe; any user's process may take a name) or an executable's absolute path"

// CheckApply refuses, as usage errors, the options of apply that were
// given and the OS q describes does not have.
func CheckApply(q *timerinfo.Report, f ApplyFlags) error {
	instead := options.Instead("--pid PID --slack D", "--dma-latency")
	if err := options.WindowsOnly(q, instead,
		options.Flag{Name: "resolution", Value: f.Resolution, Given: f.ResolutionSet},
		options.Flag{Name: "ms", Value: f.MS, Given: f.MSSet},
		options.Flag{Name: "no-console", Value: f.NoConsole, Given: f.NoConsoleSet},
		options.Flag{Name: "as-service", Value: f.AsService, Given: f.AsServiceSet}); err != nil {
		return err
	}
	if err := options.LinuxOnly(q,
		options.Flag{Name: "dma-latency", Value: f.DMALatency, Given: f.DMALatencySet},
		options.Flag{Name: "pid", Value: f.PID, Given: f.PIDSet},
		options.Flag{Name: "slack", Value: f.Slack, Given: f.SlackSet}); err != nil {
		return err
	}
	switch {
	case !f.WhileUserSet || q.Linux != nil:
	case q.Windows != nil && q.Arch == "simulated":
		return options.BadFlag("while-user", f.WhileUser, "not on the model: its processes have no user; leave it out with --simulate")
	case q.Windows == nil:
		return options.BadFlag("while-user", f.WhileUser, "a Linux and Windows flag; on %s name the program by the absolute path of its executable, which only who may write there can replace", q.OS)
	}
	return nil
}
