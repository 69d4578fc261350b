package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// Exit codes of run when the command itself cannot run, as env(1) and
// timeout(1) use them.
const (
	exitCannotRun = 126
	exitNotFound  = 127
)

type runOptions struct {
	resolution uint32
	ms         float64
	dmaLatency int32
	slack      time.Duration
}

func (a *app) runCommand() *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run [setting] -- CMD [ARGS...]",
		Short: "Run a program with a timer setting in force for its lifetime",
		Long: `Run a program with a timer setting in force while it runs, then release it.
Its standard input, output and error are its own; tickscope's one line about
the setting goes to standard error. Signals tickscope receives (Ctrl+C,
SIGTERM, SIGHUP, SIGQUIT) are passed on to the program.

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
		Args: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			switch {
			case dash < 0 && len(args) > 0:
				return usagef("tickscope run needs -- before the command: tickscope run [setting] -- %s", strings.Join(args, " "))
			case dash < 0:
				return usagef("tickscope run needs a command after --: tickscope run [setting] -- CMD [ARGS...]")
			case dash > 0:
				return usagef("tickscope run: %q before --: only flags go there", args[0])
			case len(args) == 0:
				return usagef("tickscope run needs a command after --")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return a.runProgram(cmd, &o, args) },
	}
	f := cmd.Flags()
	f.Uint32Var(&o.resolution, "resolution", 0, "Windows: hold this timer period, in 100 ns units, while the program runs")
	f.Float64Var(&o.ms, "ms", 0, "Windows: hold this timer period, in milliseconds, while the program runs")
	f.DurationVar(&o.slack, "slack", 0, "Linux: the program's timer slack (1ns..1s)")
	f.Int32Var(&o.dmaLatency, "dma-latency", 0, "Linux: hold /dev/cpu_dma_latency at this many µs while the program runs (root)")
	return cmd
}

// forwardedSignals are passed on to the program run runs.
var forwardedSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// exitCode ends tickscope with a code of its own choosing; msg, when set,
// is printed as an error.
type exitCode struct {
	code int
	msg  string
}

func (e *exitCode) Error() string { return e.msg }

func (a *app) runProgram(cmd *cobra.Command, o *runOptions, args []string) error {
	host := machineHost()
	q, err := host.Query()
	if err != nil {
		return err
	}
	if err := windowsOnly(cmd, q, "resolution", "ms"); err != nil {
		return err
	}
	if err := linuxOnly(cmd, q, "slack", "dma-latency"); err != nil {
		return err
	}
	var req timerinfo.Setting
	flags := cmd.Flags()
	switch {
	case q.Windows != nil:
		if !flags.Changed("resolution") && !flags.Changed("ms") {
			return usagef("tickscope run needs a setting: --resolution R or --ms X")
		}
		if req.Resolution100ns, err = periodFlag(cmd, o.resolution, o.ms, q.Windows); err != nil {
			return err
		}
	case q.Linux != nil:
		if !flags.Changed("slack") && !flags.Changed("dma-latency") {
			return usagef("tickscope run needs a setting: --slack D and/or --dma-latency US")
		}
		if flags.Changed("slack") {
			if o.slack < 1 || o.slack > maxSlack {
				return badFlag("slack", o.slack, "allowed 1ns..1s")
			}
			req.SlackNs = int64(o.slack)
		}
		if flags.Changed("dma-latency") {
			if o.dmaLatency < 0 || o.dmaLatency > timerinfo.DMALatencyDefaultUs {
				return badFlag("dma-latency", o.dmaLatency, "allowed 0..%d µs", timerinfo.DMALatencyDefaultUs)
			}
			value := o.dmaLatency
			req.CPUDMALatencyUs = &value
		}
	default:
		return usagef("tickscope run: %s has no timer setting tickscope can apply", runtime.GOOS)
	}

	// A program that cannot be found is found out before anything is held.
	path, err := exec.LookPath(args[0])
	if err != nil {
		code := exitCannotRun
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			code = exitNotFound
		}
		return &exitCode{code: code, msg: fmt.Sprintf("%s: %v", args[0], err)}
	}

	// Timer slack belongs to the thread, and a child inherits the slack of
	// the thread that forks it: request it on this locked thread and start
	// the program from it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	granted, release, err := a.holdSetting(host, req)
	if err != nil {
		return err
	}
	defer release()
	a.noteRun(q, req, granted, args[0])

	child := exec.Command(path, args[1:]...)
	child.Args[0] = args[0]
	child.Stdin, child.Stdout, child.Stderr = os.Stdin, os.Stdout, os.Stderr
	// Signals are passed on, not acted on: the program decides.
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, forwardedSignals...)
	defer signal.Stop(signals)
	if err := child.Start(); err != nil {
		return &exitCode{code: exitCannotRun, msg: fmt.Sprintf("starting %s: %v", args[0], err)}
	}
	done := make(chan error, 1)
	go func() { done <- child.Wait() }()
	for {
		select {
		case sig := <-signals:
			if runtime.GOOS != "windows" { // the console sends Ctrl+C to the whole group
				child.Process.Signal(sig)
			}
		case err := <-done:
			return programExit(err)
		}
	}
}

// programExit turns the program's end into tickscope's exit status.
func programExit(err error) error {
	if err == nil {
		return nil
	}
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		return err
	}
	if status, ok := exitErr.Sys().(syscall.WaitStatus); ok && status.Signaled() {
		return &exitCode{code: 128 + int(status.Signal())}
	}
	return &exitCode{code: exitErr.ExitCode()}
}

// noteRun says on standard error what is held for the program and whether
// it reaches it.
func (a *app) noteRun(q *timerinfo.Report, req, granted timerinfo.Setting, program string) {
	if q.Windows == nil {
		what := granted.String()
		fmt.Fprintf(a.stderr, "tickscope: running %s with %s (released when it exits)\n", program, what)
		return
	}
	fmt.Fprintf(a.stderr, "tickscope: holding %s (granted %s) while %s runs; it reaches %s\n", req, timerinfo.FormatPeriodMS(granted.Resolution100ns)+" ms", program, q.Windows.Reach())
	if !q.Windows.RequestsGlobal() {
		a.warnf("requests are per-process here, so %s keeps its own timer period: the request held by tickscope does not reach it (%s is %s; %s)",
			program, timerinfo.GlobalRequestsKey, report.RegistryValue(q.Windows.GlobalTimerResolutionRequests), q.Windows.GlobalAdvice())
	}
}
