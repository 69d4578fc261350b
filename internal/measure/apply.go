package measure

import (
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tickscope/tickscope/internal/hold"
	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// RegisterApply declares apply's flags on fl, into f. The apply command
// and tickscope ui's Hold, Start at logon and slack forms parse with these
// same flags (ParseApply), so that a value is refused in the same words.
func RegisterApply(fl *pflag.FlagSet, f *hold.ApplyFlags) {
	fl.Uint32Var(&f.Resolution, "resolution", 0, "Windows: hold this timer period, in 100 ns units")
	fl.Float64Var(&f.MS, "ms", 0, "Windows: hold this timer period, in milliseconds")
	fl.Int32Var(&f.DMALatency, "dma-latency", 0, "Linux: hold /dev/cpu_dma_latency at this many µs (0.."+strconv.Itoa(timerinfo.DMALatencyDefaultUs)+"; root)")
	fl.IntVar(&f.PID, "pid", 0, "Linux: the process whose timer slack --slack sets")
	fl.DurationVar(&f.Slack, "slack", 0, "Linux, with --pid: the timer slack to set (0 restores the process's default, at most 1s)")
	fl.DurationVar(&f.For, "for", 0, "release after this long (default: hold until ESC or Ctrl+C)")
	fl.BoolVar(&f.NoConsole, "no-console", false, "Windows: detach from the console while holding")
	fl.BoolVar(&f.NoEsc, "no-esc", false, "do not watch the ESC key")
	fl.BoolVar(&f.Persist, "persist", false, "start this holder at every logon (Windows) or boot (Linux); undo with tickscope startup remove")
	fl.BoolVar(&f.DryRun, "dry-run", false, "with --persist: print the task or unit it would install, and change nothing")
	fl.BoolVar(&f.AsStartup, "as-startup", false, "hold as the startup holder, which status reports and startup remove ends (the task and unit pass it)")
	fl.BoolVar(&f.Boot, "boot", false, "Windows, with --persist: install a service that holds from boot, before anyone logs on (elevated)")
	fl.BoolVar(&f.AsService, "as-service", false, "Windows: hold as the boot service, under the service manager (the service passes it)")
	fl.StringVar(&f.Listen, "listen", "", "serve the holder's state as Prometheus metrics on ADDR/metrics (PORT or :PORT bind 127.0.0.1)")
	fl.StringVar(&f.While, "while", "", "hold only while one of these programs runs: PROGRAM[,PROGRAM...], each a name (game.exe; on Windows game is game.exe) or an executable's absolute path")
}

// CheckApply refuses, as usage errors, the flags of apply that cmd was
// given and the OS q describes does not have, and records in f which
// flags were given.
func CheckApply(cmd *cobra.Command, q *timerinfo.Report, f *hold.ApplyFlags) error {
	if err := options.WindowsOnly(cmd, q, "resolution", "ms", "no-console", "as-service"); err != nil {
		return err
	}
	if err := options.LinuxOnly(cmd, q, "dma-latency", "pid", "slack"); err != nil {
		return err
	}
	changed := cmd.Flags().Changed
	f.ResolutionSet, f.MSSet, f.DMALatencySet = changed("resolution"), changed("ms"), changed("dma-latency")
	f.PIDSet, f.SlackSet, f.ForSet = changed("pid"), changed("slack"), changed("for")
	f.WhileSet = changed("while")
	return nil
}

// ParseApply parses apply's arguments as the command line does (its flags,
// options.Strict's rules, empty values refused, the same errors), for a
// caller with no command line: tickscope ui. CheckApply follows, once the
// OS is known.
func ParseApply(args []string) (*cobra.Command, *hold.ApplyFlags, error) {
	f := &hold.ApplyFlags{}
	cmd := &cobra.Command{Use: "apply"}
	RegisterApply(cmd.Flags(), f)
	options.Strict(cmd.Flags())
	if err := cmd.Flags().Parse(args); err != nil {
		return nil, nil, options.FlagError(err)
	}
	if err := options.EmptyValues(cmd.Flags()); err != nil {
		return nil, nil, err
	}
	return cmd, f, nil
}
