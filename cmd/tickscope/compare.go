package main

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/measure"
	"github.com/tickscope/tickscope/internal/outfile"
	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/version"
)

type compareOptions struct {
	interval time.Duration
	cycles   int
	methods  string
	settings string
	raw      string
	asJSON   bool
	load     sample.LoadRequest
}

func (a *app) compareCommand() *cobra.Command {
	var o compareOptions
	cmd := &cobra.Command{
		Use:   "compare",
		Short: "Compare every wait method under every timer setting on this machine",
		Long: `Measure a matrix on this machine: each wait method (rows) under each setting
(columns), as --cycles waits of --interval.

Relative methods are one-shot waits; periodic ones (clock-abs, timerfd,
timesetevent, timerqueue, go-ticker, precise-ticker, spin) are timers of that
interval. Per cell: the intervals' p50, p95 and max, the share at least twice
the target, the share under half of it (catch-up after a late tick), drift and
CPU; the best cell per method is marked, and a one-line verdict names the best
that does not keep a CPU busy.

Settings. Windows: none, timebeginperiod-1, nt-1ms, nt-0.5ms (NtSetTimerResolution).
Linux: default, slack-1ns, and as root dma-0 (slack 1 ns with
/dev/cpu_dma_latency held at 0). Nothing outlives the command.

--load N keeps N busy threads (a CPU-bound loop each, unpinned) running
for the whole matrix; the CPU column leaves their CPU time out.`,
		Example: `  # every method under every setting, 200 waits of 1 ms per cell
  tickscope compare
  # Linux: two methods at 500 µs, as JSON
  tickscope compare --methods nanosleep,clock-abs --interval 500us --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.compare(cmd, machineHost(), &o)
		},
	}
	f := cmd.Flags()
	f.DurationVar(&o.interval, "interval", time.Millisecond, "the interval (above 0, at most 1s)")
	f.IntVar(&o.cycles, "cycles", 200, "waits per cell (10..100000)")
	f.StringVar(&o.methods, "methods", "", "comma-separated methods (default: all on this OS)")
	f.StringVar(&o.settings, "settings", "", "comma-separated settings (default: all on this OS)")
	f.StringVar(&o.raw, "raw", "", "write every sample to this file (docs/raw-format.md)")
	f.BoolVar(&o.asJSON, "json", false, "print the matrix as JSON")
	registerLoad(f, &o.load)
	registerOutputs(cmd, false)
	return cmd
}

func (a *app) compare(cmd *cobra.Command, host seam.Host, o *compareOptions) error {
	host, load, err := o.load.Host(host, "")
	if err != nil {
		return err
	}
	q, err := host.Query()
	if err != nil {
		return err
	}
	matrix, err := measure.Compare(host, q, o.interval, o.cycles, o.methods, o.settings)
	if err != nil {
		return err
	}
	if len(matrix.LeftOut) > 0 {
		a.hintf("left out at --interval %v, as they wait whole milliseconds: %s", o.interval, strings.Join(matrix.LeftOut, ", "))
	}
	raw, err := outfile.OpenRaw(o.raw, rawLimits())
	if err != nil {
		return err
	}
	defer raw.Close()
	if err := load.Start(); err != nil {
		return err
	}
	points, err := a.series(cmd.Context(), host, "compare", matrix.Specs, matrix.Label)
	load.Stop()
	if err != nil {
		return err
	}
	file := &rawfile.File{Command: "compare", Query: q, Method: rawfile.PerPointMethod, DelayNs: int64(o.interval), Load: load.Record(), Points: points}
	if err := raw.Write(file, version.String()); err != nil {
		return err
	}
	r := report.Print(file, report.Judging{RawPath: o.raw, Methods: matrix.Methods, Settings: matrix.Settings})
	if r.Partial {
		a.warnf("stopped early: the matrix covers the cells measured")
	}
	return writeOutputs(cmd, file, r.Value, a.emit(o.asJSON, r.Value, r.Text))
}
