package main

import (
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/tickscope/tickscope/internal/hold"
	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// The setting flags (--resolution, --ms, --slack, --dma-latency) are
// declared here once, for apply (registerApply), run (registerRun) and
// measure (registerMeasureSetting); each command's help says what the
// setting is held for. Each flag records in its typed options whether it
// was given.

// settingVars are where a command keeps the setting flags it has (nil: a
// flag it does not have), and whether each was given.
type settingVars struct {
	resolution    *uint32
	resolutionSet *bool
	ms            *float64
	msSet         *bool
	slack         *time.Duration
	slackSet      *bool
	dmaLatency    *int32
	dmaLatencySet *bool
}

// settingHelp is each setting flag's help on one command.
type settingHelp struct{ resolution, ms, slack, dmaLatency string }

// registerSetting declares the setting flags v names on fl.
func registerSetting(fl *pflag.FlagSet, v settingVars, help settingHelp) {
	if v.resolution != nil {
		fl.Uint32Var(v.resolution, "resolution", 0, help.resolution)
		markGiven(fl, "resolution", v.resolutionSet)
	}
	if v.ms != nil {
		fl.Float64Var(v.ms, "ms", 0, help.ms)
		markGiven(fl, "ms", v.msSet)
	}
	if v.slack != nil {
		fl.DurationVar(v.slack, "slack", 0, help.slack)
		markGiven(fl, "slack", v.slackSet)
	}
	if v.dmaLatency != nil {
		fl.Int32Var(v.dmaLatency, "dma-latency", 0, help.dmaLatency)
		markGiven(fl, "dma-latency", v.dmaLatencySet)
	}
}

// registerMeasureSetting declares measure's setting flags on fl, into f:
// a period requested (Windows) or the measuring thread's slack (Linux)
// for the measurement only. options.Setting checks them.
func registerMeasureSetting(fl *pflag.FlagSet, f *options.SettingFlags) {
	registerSetting(fl, settingVars{
		resolution: &f.Resolution, resolutionSet: &f.ResolutionSet,
		ms: &f.MS, msSet: &f.MSSet,
		slack: &f.Slack, slackSet: &f.SlackSet,
	}, settingHelp{
		resolution: "Windows: request this timer period, in 100 ns units",
		ms:         "Windows: request this timer period, in milliseconds",
		slack:      "Linux: the measuring thread's timer slack (1ns..1s)",
	})
}

// registerRun declares run's setting flags on fl, into f. hold.CheckRun
// checks them.
func registerRun(fl *pflag.FlagSet, f *hold.RunFlags) {
	registerSetting(fl, settingVars{
		resolution: &f.Resolution, resolutionSet: &f.ResolutionSet,
		ms: &f.MS, msSet: &f.MSSet,
		slack: &f.Slack, slackSet: &f.SlackSet,
		dmaLatency: &f.DMALatency, dmaLatencySet: &f.DMALatencySet,
	}, settingHelp{
		resolution: "Windows: hold this timer period, in 100 ns units, while the program runs",
		ms:         "Windows: hold this timer period, in milliseconds, while the program runs",
		slack:      "Linux: the program's timer slack (1ns..1s)",
		dmaLatency: "Linux: hold /dev/cpu_dma_latency at this many µs while the program runs (root)",
	})
}

// registerApply declares apply's flags on fl, into f. hold.CheckApply
// checks them, as it checks tickscope ui's Hold, Start at logon and slack
// forms, so that a value is refused in the same words.
func registerApply(fl *pflag.FlagSet, f *hold.ApplyFlags) {
	registerHeldSetting(fl, f)
	fl.IntVar(&f.PID, "pid", 0, "Linux: the process whose timer slack --slack sets")
	markGiven(fl, "pid", &f.PIDSet)
	registerSetting(fl, settingVars{slack: &f.Slack, slackSet: &f.SlackSet}, settingHelp{
		slack: "Linux, with --pid: the timer slack to set (0 restores the process's default, at most 1s)",
	})
	fl.DurationVar(&f.For, "for", 0, "release after this long (default: hold until ESC or Ctrl+C)")
	markGiven(fl, "for", &f.ForSet)
	fl.BoolVar(&f.NoConsole, "no-console", false, "Windows: detach from the console while holding")
	markGiven(fl, "no-console", &f.NoConsoleSet)
	fl.BoolVar(&f.NoEsc, "no-esc", false, "do not watch the ESC key")
	fl.BoolVar(&f.Persist, "persist", false, "start this holder at every logon (Windows) or boot (Linux); undo with tickscope startup remove")
	fl.BoolVar(&f.DryRun, "dry-run", false, "with --persist: print the task or unit it would install, and change nothing")
	fl.BoolVar(&f.Boot, "boot", false, "Windows, with --persist: install a service that holds from boot, before anyone logs on (elevated)")
	fl.StringVar(&f.Listen, "listen", "", "serve the holder's state as Prometheus metrics on ADDR/metrics (PORT or :PORT bind 127.0.0.1)")
	registerWhile(fl, f)
	// The command lines of the startup holders and boot services that
	// earlier versions installed, which still run them: the holder
	// command is theirs now (registerHolder), and apply's help no longer
	// shows them.
	fl.BoolVar(&f.AsStartup, "as-startup", false, "hold as the startup holder, as the tasks and units earlier versions installed run it (now tickscope holder)")
	fl.BoolVar(&f.AsService, "as-service", false, "Windows: hold as the boot service, as the services earlier versions installed run it (now tickscope holder --as-service)")
	markGiven(fl, "as-service", &f.AsServiceSet)
	for _, name := range []string{"as-startup", "as-service"} {
		if err := fl.MarkHidden(name); err != nil {
			panic(err)
		}
	}
}

// registerHeldSetting declares the settings apply and the holder hold.
func registerHeldSetting(fl *pflag.FlagSet, f *hold.ApplyFlags) {
	registerSetting(fl, settingVars{
		resolution: &f.Resolution, resolutionSet: &f.ResolutionSet,
		ms: &f.MS, msSet: &f.MSSet,
		dmaLatency: &f.DMALatency, dmaLatencySet: &f.DMALatencySet,
	}, settingHelp{
		resolution: "Windows: hold this timer period, in 100 ns units",
		ms:         "Windows: hold this timer period, in milliseconds",
		dmaLatency: "Linux: hold /dev/cpu_dma_latency at this many µs (0.." + strconv.Itoa(timerinfo.DMALatencyDefaultUs) + "; root)",
	})
}

// registerWhile declares --while and --while-user.
func registerWhile(fl *pflag.FlagSet, f *hold.ApplyFlags) {
	fl.StringVar(&f.While, "while", "", hold.WhileUsage)
	markGiven(fl, "while", &f.WhileSet)
	fl.StringVar(&f.WhileUser, "while-user", "", "with --while: count only the processes this user started (Linux: a name or a user id; Windows: a name or a SID)")
	markGiven(fl, "while-user", &f.WhileUserSet)
}
