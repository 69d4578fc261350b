// Package bench is finding the setting: the bench's plan and run (the
// sweep of the timer settings this machine offers, then the judgement),
// for the command line and for tickscope ui alike, and which judgement
// flags analyze may apply to a raw file.
//
// The bench's options become its range and sweep, checked against the
// host: a value that is not allowed is a usage error naming the flag, the
// value and what is allowed (package options), returned before anything
// is measured. Run runs the plan as the command does: its warnings, the
// bench lock, stopping early, the raw file's samples, and the judgement
// printed (package report).
//
// CheckFileFlags decides which of the judgement flags analyze shares with
// bench apply to a raw file: a flag that cannot change the result is
// refused (exit 2, naming the flag) rather than silently ignored, so that
// nobody believes a measure file was judged --prefer power.
package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sweep"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// Range is the Windows bench's range of requests: the OS's whole
// range, narrowed by --from and --to when they are set.
func Range(win *timerinfo.Windows, from uint32, fromSet bool, to uint32, toSet bool) (uint32, uint32, error) {
	if !fromSet {
		from = win.Finest100ns
	}
	if !toSet {
		to = win.Coarsest100ns
	}
	for _, fl := range []struct {
		name  string
		value uint32
	}{{"from", from}, {"to", to}} {
		if fl.value < win.Finest100ns || fl.value > win.Coarsest100ns {
			return 0, 0, options.BadFlag(fl.name, fl.value, "allowed %d..%d (100 ns units) on this machine", win.Finest100ns, win.Coarsest100ns)
		}
	}
	if from > to {
		return 0, 0, options.Usagef("--from %d is above --to %d", from, to)
	}
	return from, to, nil
}

// Plan is a bench ready to run: the raw file it fills and the sweep that
// fills it, on Windows the timer periods, on Linux the measuring thread's
// timer slack (and as root each value again with /dev/cpu_dma_latency held
// at 0).
type Plan struct {
	// File is the raw file without its points.
	File *rawfile.File
	// Total is the progress bar's first estimate of the samples to take.
	Total int
	// Warnings and Hints are for the user before the sweep starts.
	Warnings, Hints []string
	runner          *sweep.Runner
	run             func(ctx context.Context) ([]rawfile.Point, error)
}

// Options are the bench's flags.
type Options struct {
	Samples    int
	Exhaustive bool
	Seed       uint64
	Prefs      sweep.Preferences
	// From and To narrow the Windows range when FromSet and ToSet.
	From, To       uint32
	FromSet, ToSet bool
	// Changed reports whether a flag was given: the Windows bench's flags
	// are bad input to the Linux bench.
	Changed func(flag string) bool
}

// WindowsFlags are the flags only the Windows bench takes, and
// LinuxFlags those only the Linux bench takes: each bench refuses the
// other's, the same way, before measuring (a Windows bench, real or on the
// model, measured 8 s with --budget-lateness and ignored it).
var (
	WindowsFlags = []string{"from", "to", "exhaustive", "budget-p50", "budget-p95"}
	LinuxFlags   = []string{"budget-lateness"}
)

// otherOSFlag refuses the first of flags that was given.
func otherOSFlag(changed func(string) bool, flags []string, format string) error {
	for _, name := range flags {
		if changed != nil && changed(name) {
			return options.Usagef(format, name)
		}
	}
	return nil
}

// New plans the bench for the host q describes; file is the raw file
// to fill (its command, query and tool already set).
func New(host seam.Host, q *timerinfo.Report, file *rawfile.File, o Options) (*Plan, error) {
	if o.Samples < rawfile.MinBenchSamples || o.Samples > rawfile.MaxBenchSamples {
		return nil, options.BadFlag("samples", o.Samples, "allowed %d..%d", rawfile.MinBenchSamples, rawfile.MaxBenchSamples)
	}
	delay := int64(time.Millisecond)
	file.DelayNs = delay
	file.Bench = &rawfile.BenchParams{Samples: o.Samples, Exhaustive: o.Exhaustive, Seed: o.Seed}
	runner := &sweep.Runner{Host: host, Plan: sweep.Plan{Samples: o.Samples, Exhaustive: o.Exhaustive, Seed: o.Seed, Prefs: o.Prefs}}
	b := &Plan{File: file, runner: runner}
	switch {
	case q.Linux != nil:
		if err := otherOSFlag(o.Changed, WindowsFlags, "--%s is a Windows bench flag; the Linux bench sweeps timer slack (see --budget-lateness)"); err != nil {
			return nil, err
		}
		settings := sweep.SlackGrid(q.Linux.Root)
		if !q.Linux.Root {
			b.Hints = append(b.Hints, "run as root to also try each slack with /dev/cpu_dma_latency held at 0")
		}
		file.Method, file.Bench.Requests, b.Total = "clock-abs", len(settings), len(settings)*o.Samples
		b.run = func(ctx context.Context) ([]rawfile.Point, error) {
			return runner.RunSettings(ctx, file.Method, settings, func(points []rawfile.Point) int {
				return sweep.JudgeSlack(points, delay, o.Prefs).Recommended
			})
		}
	case q.Windows != nil:
		if err := otherOSFlag(o.Changed, LinuxFlags, "--%s is a Linux bench flag; the Windows bench sweeps timer periods (see --budget-p50 and --budget-p95)"); err != nil {
			return nil, err
		}
		win := q.Windows
		from, to, err := Range(win, o.From, o.FromSet, o.To, o.ToSet)
		if err != nil {
			return nil, err
		}
		if win.Current100ns < win.Coarsest100ns && !win.ProcessHoldsRequest {
			b.Warnings = append(b.Warnings, fmt.Sprintf("the timer is already held at %s ms by another process: candidates coarser than that cannot be seen and will be marked", timerinfo.FormatPeriodMS(win.Current100ns)))
		}
		requests := sweep.Grid(win.Finest100ns, win.Coarsest100ns, from, to)
		// The sweep keeps a chunk only at the period the query found, which
		// is the period the judgement (sweep.JudgeFile, also analyze's)
		// holds the points to: both must read it from the same place.
		runner.Period100ns = win.Current100ns
		file.Method, file.Bench.Requests, b.Total = "sleep", len(requests), len(requests)*10
		b.run = func(ctx context.Context) ([]rawfile.Point, error) { return runner.Run(ctx, requests) }
	default:
		return nil, fmt.Errorf("bench on %s: %w; try the Windows bench with --simulate", q.OS, seam.ErrUnsupported)
	}
	return b, nil
}

// Sweep sweeps, telling progress the samples taken and the current estimate
// of the total, and fills File.Points. Stopped early it keeps what was
// measured; stopped before anything, it returns sample.ErrNothingMeasured.
func (b *Plan) Sweep(ctx context.Context, progress func(done, total int)) error {
	b.runner.Progress = progress
	points, err := b.run(ctx)
	switch {
	case errors.Is(err, sample.ErrNothingMeasured):
		return err
	case err != nil:
		return fmt.Errorf("bench: %w", err)
	}
	b.File.Points = points
	return nil
}

// Preferences checks the judgement flags bench and analyze share.
func Preferences(prefer string, budgetP50, budgetP95, budgetLateness time.Duration) (sweep.Preferences, error) {
	if prefer != "latency" && prefer != "power" {
		return sweep.Preferences{}, options.BadFlag("prefer", prefer, "allowed latency or power")
	}
	for _, budget := range []struct {
		flag  string
		value time.Duration
	}{{"budget-p50", budgetP50}, {"budget-p95", budgetP95}, {"budget-lateness", budgetLateness}} {
		if budget.value <= 0 {
			return sweep.Preferences{}, options.BadFlag(budget.flag, budget.value, "must be above 0")
		}
	}
	return sweep.Preferences{Prefer: prefer, BudgetP50: int64(budgetP50), BudgetP95: int64(budgetP95), BudgetLateness: int64(budgetLateness)}, nil
}

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

// Run is bench's run of b: its hints and warnings, the bench lock on
// this machine (sys; none on the model: two benches would hold each
// other's requests), the sweep with load running throughout (nil for
// none; b measures on the host sample.Loaded gave with it), stopped early
// when ctx ends, and the judgement printed as bench prints it; a sweep
// with nothing usable is its error.
func Run(ctx context.Context, b *Plan, sys seam.Locker, load *sample.Load, judging report.Judging, r report.Reporting) (report.Printed, error) {
	for _, hint := range b.Hints {
		r.Hint(hint)
	}
	for _, warning := range b.Warnings {
		r.Warn(report.SimulatedPrefix(r.Scenario) + warning)
	}
	if r.Scenario == "" {
		release, err := sys.Lock(seam.BenchLock)
		if err != nil {
			r.End()
			return report.Printed{}, err
		}
		defer release()
	}
	if err := load.Start(); err != nil {
		r.End()
		return report.Printed{}, err
	}
	b.File.Load = load.Record()
	err := b.Sweep(ctx, r.Progress)
	load.Stop()
	r.End()
	if err != nil {
		return report.Printed{}, err
	}
	if err := r.Keep(b.File); err != nil {
		return report.Printed{}, err
	}
	printed := report.Print(b.File, judging)
	if printed.Unusable != nil {
		return printed, printed.Unusable
	}
	if printed.Partial {
		r.Warn(report.SimulatedPrefix(r.Scenario) + "stopped early: the recommendation covers the settings measured so far")
	}
	return printed, nil
}

// FileFlags are the judgement flags that only a bench's file takes.
var FileFlags = []string{"prefer", "rows", "budget-p50", "budget-p95", "budget-lateness"}

// CheckFileFlags refuses a judgement flag that does not apply to f, read from
// path: any bench flag on a measure, curve or compare file, and a flag of
// the other OS's bench on a bench file. changed says whether a flag was
// given on the command line.
func CheckFileFlags(f *rawfile.File, path string, changed func(flag string) bool) error {
	for _, flag := range FileFlags {
		if !changed(flag) {
			continue
		}
		switch {
		case f.Command != "bench":
			return options.Usagef("--%s judges a bench's file; %s is a %s file, which analyze summarises without judging", flag, path, f.Command)
		case f.Query.Linux != nil && slices.Contains(WindowsFlags, flag):
			return options.Usagef("--%s judges the Windows bench; %s is from the Linux bench (its budget is --budget-lateness)", flag, path)
		case f.Query.Linux == nil && slices.Contains(LinuxFlags, flag):
			return options.Usagef("--%s judges the Linux bench; %s is from the Windows bench (its budgets are --budget-p50 and --budget-p95)", flag, path)
		}
	}
	return nil
}
