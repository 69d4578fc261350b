package main

import (
	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/metrics"
	"github.com/tickscope/tickscope/internal/outfile"
	"github.com/tickscope/tickscope/internal/term"
	"github.com/tickscope/tickscope/internal/version"
	"github.com/tickscope/tickscope/internal/watch"
)

func (a *app) watchCommand() *cobra.Command {
	var f watch.Flags
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "Watch the timer state and wake-up lateness over time; changes nothing",
		Long: `Read the timer state every --every (Windows: current, finest, coarsest period,
the global key; Linux: tick, cpu_dma_latency, timer slack; the startup holder),
print a timestamped line per change and who holds the timer (as tickscope who).

Every --measure-every, time 200 waits of 1 ms. ESC or Ctrl+C ends it, summed up.
--log and --json write JSON lines (docs/json.md); --listen serves Prometheus
metrics on ADDR/metrics (PORT or :PORT bind 127.0.0.1).`,
		Example: `  # until ESC or Ctrl+C
  tickscope watch
  # every 5 s, logged, with Prometheus metrics on 127.0.0.1:9101
  tickscope watch --every 5s --log timer.jsonl --listen 9101`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.watch(cmd, f) },
	}
	fl := cmd.Flags()
	fl.DurationVar(&f.Every, "every", watch.DefaultEvery, "read the timer state this often (100ms..1h)")
	fl.DurationVar(&f.MeasureEvery, "measure-every", watch.DefaultMeasureEvery, "measure a burst of waits this often (1s..24h)")
	fl.StringVar(&f.Method, "method", "", "the bursts' wait method (default: the OS's default, as in measure)")
	fl.StringVar(&f.Log, "log", "", "append every event to this file as a JSON line (docs/json.md)")
	fl.StringVar(&f.Listen, "listen", "", "serve Prometheus metrics on ADDR/metrics")
	fl.BoolVar(&f.JSON, "json", false, "print every event as a JSON line instead of text (docs/json.md)")
	return cmd
}

func (a *app) watch(cmd *cobra.Command, f watch.Flags) error {
	o, err := watch.ForHost(machineHost(), machineSystem(), f, version.String()) // checks, opens nothing
	if err != nil {
		return err
	}
	if err := outfile.CheckLines("log", f.Log); err != nil {
		return err
	}
	m, stop, err := metrics.Start("listen", f.Listen, version.String(), func(msg string) { a.warnf("%s", msg) })
	if err != nil {
		return err
	}
	defer stop()
	logFile, err := outfile.OpenLines("log", f.Log)
	if err != nil {
		return err
	}
	o.Log = watch.NewLog(logFile)
	defer o.Log.Close()
	ctx, done := term.Stoppable(cmd.Context())
	defer done()
	o.Emit = func(e watch.Event) error { observe(m, e); return watch.WriteEvent(a.stdout, a.stderr, e, f.JSON) }
	_, err = watch.Run(ctx, o)
	return err
}

// observe feeds a watch event to --listen's metrics: a state read sets
// the gauges, a change counts, a burst feeds the histogram.
func observe(m *metrics.Metrics, e watch.Event) {
	if e.State != nil {
		m.SetState(*e.State)
	}
	for _, c := range e.Changes {
		m.Changed(c.Field)
	}
	if e.Burst != nil {
		m.ObserveLateness(e.Burst.Method, e.Burst.Lateness)
	}
}
