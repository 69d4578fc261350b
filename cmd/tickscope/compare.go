package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

type compareOptions struct {
	interval time.Duration
	cycles   int
	methods  string
	settings string
	raw      string
	asJSON   bool
}

// namedSetting is a setting compare offers, by the name --settings takes.
type namedSetting struct {
	name    string
	setting timerinfo.Setting
}

// compareSettings are the settings compare offers on this machine.
func compareSettings(q *timerinfo.Report) []namedSetting {
	switch {
	case q.Windows != nil:
		out := []namedSetting{{"none", timerinfo.Setting{}}, {"timebeginperiod-1", timerinfo.Setting{TimeBeginPeriodMs: 1}}}
		for _, s := range []struct {
			name   string
			period uint32
		}{{"nt-1ms", 10000}, {"nt-0.5ms", 5000}} {
			if s.period >= q.Windows.Finest100ns && s.period <= q.Windows.Coarsest100ns {
				out = append(out, namedSetting{s.name, timerinfo.Setting{Resolution100ns: s.period}})
			}
		}
		return out
	case q.Linux != nil:
		out := []namedSetting{{"default", timerinfo.Setting{}}, {"slack-1ns", timerinfo.Setting{SlackNs: 1}}}
		if q.Linux.Root {
			zero := int32(0)
			out = append(out, namedSetting{"dma-0", timerinfo.Setting{SlackNs: 1, CPUDMALatencyUs: &zero}})
		}
		return out
	}
	return []namedSetting{{"none", timerinfo.Setting{}}}
}

func (a *app) compareCommand() *cobra.Command {
	var o compareOptions
	cmd := &cobra.Command{
		Use:   "compare",
		Short: "Compare every wait method under every timer setting on this machine",
		Long: `A matrix like seed 003's, measured here: each wait method (rows) under each
setting (columns), as --cycles waits of --interval. Relative methods are
one-shot waits; periodic ones (clock-abs, timerfd, timesetevent,
timerqueue, go-ticker, precise-ticker, spin) are timers of that interval. Per cell: the intervals'
p50, p95 and max, the share at least twice the target, the share under half
of it (catch-up after a late tick), drift and CPU; the best cell per method is
marked, and a one-line verdict names the best that does not keep a CPU busy.

Settings. Windows: none, timebeginperiod-1, nt-1ms, nt-0.5ms (NtSetTimerResolution).
Linux: default, slack-1ns, and as root dma-0 (slack 1 ns with
/dev/cpu_dma_latency held at 0). Nothing outlives the command.`,
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
	return cmd
}

// pick filters a list of names by a comma-separated selection.
func pick(flag, selection string, valid []string) ([]string, error) {
	if selection == "" {
		return valid, nil
	}
	var out []string
	for _, name := range strings.Split(selection, ",") {
		name = strings.TrimSpace(name)
		if !slices.Contains(valid, name) {
			return nil, badFlag(flag, selection, "unknown %q; valid here: %s", name, strings.Join(valid, ", "))
		}
		out = append(out, name)
	}
	return out, nil
}

func (a *app) compare(cmd *cobra.Command, host seam.Host, o *compareOptions) error {
	switch {
	case o.interval <= 0 || o.interval > time.Second:
		return badFlag("interval", o.interval, "allowed above 0 and at most 1s")
	case o.cycles < 10 || o.cycles > 100_000:
		return badFlag("cycles", o.cycles, "allowed 10..100000")
	}
	q, err := host.Query()
	if err != nil {
		return err
	}
	var methodNames []string
	byName := map[string]seam.Method{}
	for _, m := range host.Methods() {
		methodNames = append(methodNames, m.Name)
		byName[m.Name] = m
	}
	methods, err := pick("methods", o.methods, methodNames)
	if err != nil {
		return err
	}
	offered := compareSettings(q)
	var settingNames []string
	for _, s := range offered {
		settingNames = append(settingNames, s.name)
	}
	chosen, err := pick("settings", o.settings, settingNames)
	if err != nil {
		return err
	}
	if err := rawfileCheck(o.raw); err != nil {
		return err
	}
	var settings []timerinfo.Setting
	var labels []string
	for _, name := range chosen {
		s := offered[slices.Index(settingNames, name)].setting
		settings = append(settings, s)
		labels = append(labels, s.String())
	}

	ctx, done := stoppable(cmd.Context())
	total := len(methods) * len(settings)
	bar := newProgress(a.stderr, total, "compare (ESC or Ctrl+C stops early)")
	var points []rawfile.Point
	cell := 0
measuring:
	for _, name := range methods {
		m := byName[name]
		for _, s := range settings {
			cell++
			if m.WholeMilliseconds && o.interval%time.Millisecond != 0 {
				continue // the cell stays empty: this method cannot wait that long
			}
			p, err := sample.Measure(ctx, host, sample.Spec{Method: name, Delay: o.interval, Samples: o.cycles, Warmup: 2, Setting: s}, nil)
			if err != nil {
				bar.finish()
				done()
				return fmt.Errorf("%s with %s: %w", name, s, err)
			}
			bar.update(cell, total)
			if len(p.Latencies) > 0 {
				p.Method, p.Periodic = name, m.Schedule == seam.Periodic
				points = append(points, *p)
			}
			if p.Stopped {
				break measuring
			}
		}
	}
	bar.finish()
	done()
	if len(points) == 0 {
		return fmt.Errorf("stopped before any cell was measured")
	}
	file := newRawFile(rawfile.File{Command: "compare", Query: q, Method: "(per point)", DelayNs: int64(o.interval), Points: points})
	if err := writeRaw(o.raw, file); err != nil {
		return err
	}
	c := report.CompareOf(file, methods, labels)
	c.RawFile = o.raw
	if c.Partial {
		a.warnf("stopped early: the matrix covers the cells measured")
	}
	if o.asJSON {
		return writeJSON(a.stdout, c)
	}
	report.WriteCompare(a.stdout, c)
	return nil
}
