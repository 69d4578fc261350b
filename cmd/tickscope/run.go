package main

import (
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/hold"
	"github.com/tickscope/tickscope/internal/options"
)

func (a *app) runCommand() *cobra.Command {
	var f hold.RunFlags
	cmd := &cobra.Command{
		Use:   "run [setting] -- CMD [ARGS...]",
		Short: "Run a program with a timer setting in force for its lifetime",
		Long: `Run a program with a timer setting in force while it runs, then release it.

Its standard input, output and error are its own; tickscope's one line about
the setting goes to standard error. Signals tickscope receives (Ctrl+C,
SIGTERM, SIGHUP, SIGQUIT) are passed on to the program. If tickscope itself
is killed, the program is killed with it (Linux: the program; Windows: the
program and what it started, through a job object).

Linux:
  --slack D         the program's timer slack (inherited across fork and exec,
                    so its threads start with it; 1ns..1s)
  --dma-latency US  /dev/cpu_dma_latency held at US µs while it runs (root)
Windows:
  --resolution R | --ms X  the timer period held by tickscope while the
                    program runs. Since Windows 10 2004 a request affects only
                    the process that makes it: unless requests are global here
                    (GlobalTimerResolutionRequests on Windows 11 / Server
                    2022+), this does not reach the program, and run says so.

Exit status: the program's own; 128+N when a signal N ended it; 126 when it
cannot be run and 127 when it is not found; 2 for bad input and 1 when the
setting fails, before the program starts.`,
		Example: `  # Linux: a program with 1 ns timer slack
  tickscope run --slack 1ns -- ./loop --hz 1000
  # Linux: with /dev/cpu_dma_latency held at 0 while it runs (root)
  tickscope run --dma-latency 0 -- cyclictest -m -p 80 -D 60
  # Windows: hold 0.5 ms while a game runs
  tickscope run --ms 0.5 -- game.exe`,
		Args: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			switch {
			case dash < 0 && len(args) > 0:
				return options.Usagef("tickscope run needs -- before the command: tickscope run [setting] -- %s", strings.Join(args, " "))
			case dash < 0:
				return options.Usagef("tickscope run needs a command after --: tickscope run [setting] -- CMD [ARGS...]")
			case dash > 0:
				return options.Usagef("tickscope run: %q before --: only flags go there", args[0])
			case len(args) == 0:
				return options.Usagef("tickscope run needs a command after --")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return a.runProgram(cmd, f, args) },
	}
	registerRun(cmd.Flags(), &f)
	return cmd
}

func (a *app) runProgram(cmd *cobra.Command, f hold.RunFlags, args []string) error {
	host := machineHost()
	q, err := host.Query()
	if err != nil {
		return err
	}
	if err := hold.CheckRun(q, f); err != nil {
		return err
	}
	req, err := hold.RunSetting(q, f)
	if err != nil {
		return err
	}
	return hold.Run(cmd.Context(), host, machineSystem(), q, req, args, hold.RunOptions{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Warn: func(msg string) { a.warnf("%s", msg) },
		Started: func(s hold.RunStart) {
			hold.WriteRunStart(a.stderr, s)
			if w := hold.RunWarning(s); w != "" {
				a.warnf("%s", w)
			}
		},
	})
}
