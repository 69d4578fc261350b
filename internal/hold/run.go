package hold

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// Exit statuses of run when the program itself cannot run, as env(1) and
// timeout(1) use them.
const (
	ExitCannotRun = 126
	ExitNotFound  = 127
)

// ExitStatus ends tickscope with a status of its own choosing (run: the
// program's, or 126/127; verify-global: 1 when inconclusive); Msg, when
// set, is printed as an error.
type ExitStatus struct {
	Code int
	Msg  string
}

func (e *ExitStatus) Error() string { return e.Msg }

// RunSetting checks run's setting against this machine. Flags of the other
// OS are refused before, by the command.
func RunSetting(q *timerinfo.Report, f RunFlags) (timerinfo.Setting, error) {
	var req timerinfo.Setting
	switch {
	case q.Windows != nil:
		period, ok, err := options.Period(f.Resolution, f.ResolutionSet, f.MS, f.MSSet, q.Windows)
		if err != nil {
			return req, err
		}
		if !ok {
			return req, options.Usagef("tickscope run needs a setting: --resolution R or --ms X")
		}
		req.Resolution100ns = period
	case q.Linux != nil:
		if !f.SlackSet && !f.DMALatencySet {
			return req, options.Usagef("tickscope run needs a setting: --slack D and/or --dma-latency US")
		}
		if f.SlackSet {
			if err := options.Slack("slack", f.Slack, false); err != nil {
				return req, err
			}
			req.SlackNs = int64(f.Slack)
		}
		if f.DMALatencySet {
			if err := options.DMALatency("dma-latency", f.DMALatency); err != nil {
				return req, err
			}
			value := f.DMALatency
			req.CPUDMALatencyUs = &value
		}
	default:
		return req, options.Usagef("tickscope run: %s has no timer setting tickscope can apply", q.OS)
	}
	return req, nil
}

// RunStart is what run holds for its program, told once it is held.
type RunStart struct {
	Program   string
	Requested timerinfo.Setting
	Granted   timerinfo.Setting
	// Windows is the query's Windows section: whom the request reaches
	// (nil elsewhere).
	Windows *timerinfo.Windows
}

// RunOptions are the program's standard streams and what run reports.
type RunOptions struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Started is called once the setting is held, before the program starts.
	Started func(RunStart)
	// Warn reports a failed release, and a program that could not be tied
	// to tickscope.
	Warn func(string)
}

// forwardedSignals are passed on to the program run runs.
var forwardedSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// Run runs argv with req in force for its lifetime, and ends with the
// program's exit status as an *ExitStatus (nil for 0). A program that
// cannot be found or run is found out before anything is held (127, 126).
func Run(ctx context.Context, host seam.Host, sys seam.Children, q *timerinfo.Report, req timerinfo.Setting, argv []string, o RunOptions) error {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		code := ExitCannotRun
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			code = ExitNotFound
		}
		return &ExitStatus{Code: code, Msg: fmt.Sprintf("%s: %v", argv[0], err)}
	}
	// Timer slack belongs to the thread, and a child inherits the slack of
	// the thread that forks it: request it on this locked thread and start
	// the program from it. The lock also keeps the program tied on Linux:
	// its parent-death signal follows the thread that forked it
	// (seam.Children.StartTied), and this goroutine keeps that thread, locked,
	// until the program has exited.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	granted, release, err := holdSetting(host, req, o.Warn)
	if err != nil {
		return err
	}
	defer release()
	if o.Started != nil {
		o.Started(RunStart{Program: argv[0], Requested: req, Granted: granted, Windows: q.Windows})
	}
	child := exec.Command(path, argv[1:]...)
	child.Args[0] = argv[0]
	child.Stdin, child.Stdout, child.Stderr = o.Stdin, o.Stdout, o.Stderr
	// Signals are caught so that tickscope outlives them and releases the
	// setting after the program, and passed on where the OS does not
	// deliver them to the program itself: the program decides.
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, forwardedSignals...)
	defer signal.Stop(signals)
	// Started tied: a killed tickscope (SIGKILL, TerminateProcess), which
	// cannot pass anything on, does not leave the program running with the
	// setting it was given.
	untie, err := sys.StartTied(child)
	var notTied *seam.NotTiedError
	switch {
	case errors.As(err, &notTied):
		if o.Warn != nil {
			o.Warn(notTied.Error())
		}
	case err != nil:
		return &ExitStatus{Code: ExitCannotRun, Msg: fmt.Sprintf("starting %s: %v", argv[0], err)}
	}
	defer untie()
	done := make(chan error, 1)
	go func() { done <- child.Wait() }()
	for {
		select {
		case sig := <-signals:
			if sys.ForwardSignals() {
				child.Process.Signal(sig)
			}
		case err := <-done:
			return ProgramExit(err)
		}
	}
}

// ProgramExit turns the program's end into tickscope's exit status: the
// program's own, 128+N when signal N ended it.
func ProgramExit(err error) error {
	if err == nil {
		return nil
	}
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		return err
	}
	if status, ok := exitErr.Sys().(syscall.WaitStatus); ok && status.Signaled() {
		return &ExitStatus{Code: 128 + int(status.Signal())}
	}
	return &ExitStatus{Code: exitErr.ExitCode()}
}
