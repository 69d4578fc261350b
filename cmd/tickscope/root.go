package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/hold"
	"github.com/tickscope/tickscope/internal/machine"
	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/platform"
	"github.com/tickscope/tickscope/internal/printable"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/startup"
	"github.com/tickscope/tickscope/internal/version"
)

// app carries what every command shares: where output goes.
type app struct {
	stdout, stderr io.Writer
	// started is set once a command's own code runs: errors before that come
	// from cobra's parsing of the command line and are usage errors.
	started bool
}

// warnf and hintf write one line each, made printable as errors are (an
// argument may quote a file or another process).
func (a *app) warnf(format string, args ...any) {
	fmt.Fprintf(a.stderr, "tickscope: warning: %s\n", options.OneLine(fmt.Sprintf(format, args...)))
}

func (a *app) hintf(format string, args ...any) {
	fmt.Fprintf(a.stderr, "tickscope: hint: %s\n", options.OneLine(fmt.Sprintf(format, args...)))
}

func run(args []string) int {
	a := &app{stdout: os.Stdout, stderr: os.Stderr}
	defer startup.LogHolderOutput(machineSystem(), args, &a.stdout, &a.stderr)()
	a.stdout = &stream{w: a.stdout, name: "standard output", absent: platform.NoStream}
	return a.execute(args)
}

// stream is standard output as every command writes it: it records the
// first write that failed, so that a command whose output could not be
// written exits 1 naming the stream whichever way it printed (a text
// report drops Fprintf's error, --json returns it), checked once when
// the command returns (execute).
type stream struct {
	w    io.Writer
	name string
	// absent tells a write that failed because the process has no such
	// stream (platform.NoStream): its output goes nowhere by how it was
	// started, and is not a failure.
	absent func(error) bool
	mu     sync.Mutex
	err    error
}

func (s *stream) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if err == nil || s.absent != nil && s.absent(err) {
		return len(p), nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // "write /dev/stdout: ...": the stream is named here
		}
		s.err = fmt.Errorf("writing %s: %w", s.name, err)
	}
	return n, s.err
}

// failed is the first write that failed, nil while none has.
func (s *stream) failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// outputFailed is the first failed write to standard output, when it is
// a stream (run's; a test's buffer is not).
func (a *app) outputFailed() error {
	if s, ok := a.stdout.(*stream); ok {
		return s.failed()
	}
	return nil
}

func (a *app) execute(args []string) int {
	root := a.rootCommand()
	root.SetArgs(args)
	// A closed terminal (SIGHUP) ends work as Ctrl+C does: holds are
	// released and a --raw file's temporary removed, not left behind.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	err := root.ExecuteContext(ctx)
	var exit *hold.ExitStatus
	switch {
	case err == nil || errors.As(err, &exit) && exit.Code == 0:
		// The command succeeded, unless what it printed was lost.
		if failed := a.outputFailed(); failed != nil {
			fmt.Fprintf(a.stderr, "tickscope: error: %s\n", options.OneLine(failed.Error()))
			return 1
		}
		return 0
	case exit != nil:
		if exit.Msg != "" {
			fmt.Fprintf(a.stderr, "tickscope: error: %s\n", options.OneLine(exit.Msg))
		}
		return exit.Code
	}
	fmt.Fprintf(a.stderr, "tickscope: error: %s\n", options.OneLine(err.Error()))
	var usage *options.UsageError
	// Before a command's own code runs, an error is cobra's parsing, unless
	// it is the output lost (--version, the help).
	if errors.As(err, &usage) || !a.started && a.outputFailed() == nil {
		return 2
	}
	return 1
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "tickscope",
		Short: "Measure the timer resolution and wake-up latency this machine delivers",
		Long: `tickscope measures the timer resolution and wake-up latency a machine really
delivers, on Windows and Linux, from the distribution of real waits rather
than from one number; it changes nothing unless a command says so.`,
		Example: `  # what the OS says about its timers, then what a wait really takes
  tickscope query
  tickscope measure
  # find the best setting, hold it, and check it
  tickscope bench
  tickscope apply --resolution 5000
  tickscope status
  # the same as buttons in the browser
  tickscope ui`,
		Version:           version.String() + " " + runtime.GOOS + "/" + runtime.GOARCH,
		SilenceErrors:     true,
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: false},
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			a.started = true
			// The help is readable everywhere; nothing else runs on an OS
			// tickscope does not serve (platform.Supported says which).
			if cmd == cmd.Root() || cmd.Name() == "help" {
				return nil
			}
			return platform.Supported()
		},
		// Runnable, so that cobra rejects an unknown command instead of
		// printing the help and exiting 0; a double-click opens tickscope ui.
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !doubleClicked(machineSystem()) {
				return cmd.Help()
			}
			return a.ui(cmd.Context(), machineHost(), sim.Choice{}, false)
		},
	}
	root.AddCommand(a.queryCommand(), a.measureCommand(), a.benchCommand(), a.analyzeCommand(), a.curveCommand(), a.compareCommand(), a.applyCommand(), a.globalCommand(), a.startupCommand(), a.statusCommand(), a.runCommand(), a.verifyGlobalCommand(), a.whoCommand(), a.watchCommand(), a.explainCommand(), a.uiCommand(), a.holderCommand())
	root.SetOut(a.stdout) // before harden, which adds cobra's completion command
	root.SetErr(a.stderr)
	harden(root) // the rules every command shares: last, once the tree is whole
	return root
}

// noArgs rejects positional arguments with a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return options.Usagef("%s takes no arguments, got %q", cmd.CommandPath(), args[0])
	}
	return nil
}

// machineHost is the host the commands measure: this machine's OS, with
// its wait methods.
func machineHost() seam.Host { return machine.Host() }

// doubleClicked reports whether tickscope, run with no command, is alone on
// a console made for it, as when a gamer double-clicks tickscope.exe in
// Explorer: the window closes when tickscope exits, so the help would
// flash and vanish. It then opens tickscope ui, the dashboard, which runs
// until the window is closed. In a terminal (other processes on the
// console) and on every other OS, a bare tickscope prints the help.
func doubleClicked(sys seam.Desktop) bool { return sys.Console() == seam.ConsoleAlone }

// machineSystem is what the hold commands change on this machine.
func machineSystem() seam.System { return platform.NewSystem() }
func machineShell() seam.Shell   { return platform.NewShell() } // ui's browser and elevation

// emit prints a command's result: as JSON with --json, as text otherwise.
func (a *app) emit(asJSON bool, result any, text func(io.Writer)) error {
	if asJSON {
		return writeJSON(a.stdout, result)
	}
	text(a.stdout)
	return a.outputFailed() // so that a command that failed to print writes no files
}

// writeJSON writes v as indented JSON, with every character that does not
// print written as a \u escape (printable.JSON): the same value, safe on a
// terminal.
func writeJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(printable.JSON(data), '\n'))
	return err
}
