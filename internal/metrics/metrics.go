// Package metrics is tickscope's Prometheus endpoint (watch --listen and
// apply --listen): the timer state, the wake-up lateness histograms, the
// counters of state changes (by field: period changes are
// field="current_period") and holder re-applies, and build info, on a
// registry of its own (not client_golang's global one), served read-only
// on /metrics. Names follow Prometheus' conventions: base units (seconds),
// _total for counters. docs/prometheus/ has the recording rules and
// alerts that docs/prometheus.md describes.
package metrics

import (
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tickscope/tickscope/internal/stats"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/timerstate"
)

// Metrics holds the endpoint's collectors. Its methods may be called from
// any goroutine, and do nothing on a nil Metrics (no --listen). Each gauge is a vector without labels, so that it is
// exposed only once its value is known (a DMA latency that needs root to
// read is absent, not 0).
type Metrics struct {
	Registry *prometheus.Registry

	current, finest, coarsest, globalKey *prometheus.GaugeVec
	holderRunning, heldPeriod, heldDMA   *prometheus.GaugeVec
	dmaLatency, slack                    *prometheus.GaugeVec
	lateness                             *prometheus.HistogramVec
	changes                              *prometheus.CounterVec
	reapplies                            prometheus.Counter
	// holding and whileProcesses: a holder with --while.
	holding, whileProcesses *prometheus.GaugeVec
}

// New registers the metrics, with build info naming version. Those of the
// other OS stay absent, as they are never set.
func New(version string) *Metrics {
	m := &Metrics{Registry: prometheus.NewRegistry()}
	gauge := func(name, help string) *prometheus.GaugeVec {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "tickscope", Name: name, Help: help}, nil)
		m.Registry.MustRegister(g)
		return g
	}
	m.current = gauge("timer_current_period_seconds", "The timer interrupt's period now: Windows' current timer resolution (NtQueryTimerResolution), Linux's scheduler tick (1/HZ).")
	m.holderRunning = gauge("holder_running", "1 while a tickscope holder runs: this process for apply, the startup holder for watch.")
	m.finest = gauge("timer_finest_period_seconds", "The finest timer period Windows offers (NtQueryTimerResolution).")
	m.coarsest = gauge("timer_coarsest_period_seconds", "The coarsest (default) timer period of Windows (NtQueryTimerResolution).")
	m.globalKey = gauge("global_timer_requests_in_force", "1 when GlobalTimerResolutionRequests is in force in the running boot (a request reaches every process).")
	m.heldPeriod = gauge("holder_held_period_seconds", "The Windows timer period the holder holds: its request (apply), or its definition's (watch, while the startup holder runs).")
	m.dmaLatency = gauge("cpu_dma_latency_seconds", "The aggregate /dev/cpu_dma_latency request in force (2000 s: none held); absent when unreadable (it needs root).")
	m.slack = gauge("timer_slack_seconds", "The timer slack of tickscope's reading thread, which its threads inherit.")
	m.heldDMA = gauge("holder_held_cpu_dma_latency_seconds", "The /dev/cpu_dma_latency value the holder holds: its request (apply), or its definition's (watch, while the startup holder runs).")
	m.holding = gauge("holder_holding", "1 while the holder holds its setting, 0 while a holder with --while waits for its programs with nothing held.")
	m.whileProcesses = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "tickscope", Name: "holder_while_processes",
		Help: "The processes running now of each program a holder with --while holds for (the setting is held while any runs)."}, []string{"program"})
	m.Registry.MustRegister(m.whileProcesses)
	m.lateness = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "tickscope", Name: "wake_lateness_seconds",
		Help:                            "How much later than requested a wait ended, measured in bursts of the method's 1 ms waits.",
		Buckets:                         bucketsSeconds(),
		NativeHistogramBucketFactor:     1.1,
		NativeHistogramMaxBucketNumber:  160,
		NativeHistogramMinResetDuration: time.Hour,
	}, []string{"method"})
	m.changes = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "tickscope", Name: "timer_state_changes_total",
		Help: "Changes of the timer state seen between two reads, by field (watch's change fields: current_period for period changes, cpu_dma_latency, timer_slack, startup_holder, ...)."}, []string{"field"})
	m.reapplies = prometheus.NewCounter(prometheus.CounterOpts{Namespace: "tickscope", Name: "holder_reapplies_total",
		Help: "Times the holder found its setting lost and applied it again."})
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "tickscope", Name: "build_info",
		Help: "1, labelled with tickscope's version and the platform it was built for."}, []string{"version", "goos", "goarch"})
	info.WithLabelValues(version, runtime.GOOS, runtime.GOARCH).Set(1)
	m.Registry.MustRegister(m.lateness, m.changes, m.reapplies, info)
	return m
}

// bucketsSeconds are the lateness buckets, 1 µs .. 100 ms, in seconds.
func bucketsSeconds() []float64 {
	out := make([]float64, len(stats.LatenessBucketsNs))
	for i, ns := range stats.LatenessBucketsNs {
		out[i] = float64(ns) / 1e9
	}
	return out
}

func seconds100ns(p uint32) float64 { return float64(p) / 1e7 }

// SetState sets the gauges from a state read. A value the state does not
// know (the DMA latency without root) stays absent.
func (m *Metrics) SetState(s timerstate.State) {
	if m == nil {
		return
	}
	if p := s.CurrentPeriod(); p > 0 {
		set(m.current, p.Seconds())
	}
	if s.Finest100ns != 0 {
		set(m.finest, seconds100ns(s.Finest100ns))
		set(m.coarsest, seconds100ns(s.Coarsest100ns))
	}
	if s.GlobalKeyInForce != nil {
		set(m.globalKey, boolValue(*s.GlobalKeyInForce))
	}
	if s.DMALatencyUs != nil {
		set(m.dmaLatency, float64(*s.DMALatencyUs)/1e6)
	}
	if s.TimerSlackNs != 0 {
		set(m.slack, float64(s.TimerSlackNs)/1e9)
	}
	if h := s.Holder; h != nil {
		set(m.holderRunning, boolValue(h.Running))
		m.heldPeriod.Reset()
		m.heldDMA.Reset()
		m.holding.Reset()
		m.whileProcesses.Reset()
		if !h.Running {
			return
		}
		holding := len(h.While) == 0 || len(h.HoldingFor) > 0
		set(m.holding, boolValue(holding))
		m.setWhile(h.While, h.HoldingFor)
		if holding && h.Held != nil {
			m.setHeld(*h.Held)
		}
	}
}

// setWhile sets the count of each watched program's processes running.
func (m *Metrics) setWhile(programs []string, running []timerstate.ProgramRunning) {
	for _, program := range programs {
		n := 0
		for _, r := range running {
			if r.Program == program {
				n++
			}
		}
		m.whileProcesses.WithLabelValues(program).Set(float64(n))
	}
}

// HolderWhile is a holder with --while (apply): whether it holds setting
// now, and its programs' processes running.
func (m *Metrics) HolderWhile(state timerstate.WhileState, setting timerinfo.Setting) {
	if m == nil {
		return
	}
	set(m.holderRunning, 1)
	set(m.holding, boolValue(state.Holding))
	m.setWhile(state.Programs, state.Running)
	m.heldPeriod.Reset()
	m.heldDMA.Reset()
	if state.Holding {
		m.setHeld(setting)
	}
}

// SetHolder says that this process holds setting (apply).
func (m *Metrics) SetHolder(held timerinfo.Setting) {
	if m == nil {
		return
	}
	set(m.holderRunning, 1)
	set(m.holding, 1)
	m.setHeld(held)
}

// setHeld sets what a holder holds.
func (m *Metrics) setHeld(held timerinfo.Setting) {
	switch {
	case held.Resolution100ns != 0:
		set(m.heldPeriod, seconds100ns(held.Resolution100ns))
	case held.CPUDMALatencyUs != nil:
		set(m.heldDMA, float64(*held.CPUDMALatencyUs)/1e6)
	}
}

func set(g *prometheus.GaugeVec, v float64) { g.WithLabelValues().Set(v) }

// HolderChecked is what a holder calls after each check (apply's
// HoldOptions.Checked): the state its check read, what this process
// holds, and a re-apply to count.
func (m *Metrics) HolderChecked(q *timerinfo.Report, held timerinfo.Setting, reapplied bool) {
	if m == nil {
		return
	}
	m.SetState(timerstate.StateOf(q))
	m.SetHolder(held)
	if reapplied {
		m.Reapplied()
	}
}

// Reapplied counts one re-apply of the holder's setting.
func (m *Metrics) Reapplied() {
	if m != nil {
		m.reapplies.Inc()
	}
}

// ObserveLateness adds a burst's lateness (ns) to the method's histogram.
func (m *Metrics) ObserveLateness(method string, latenessNs []int64) {
	if m == nil {
		return
	}
	h := m.lateness.WithLabelValues(method)
	for _, ns := range latenessNs {
		h.Observe(float64(ns) / 1e9)
	}
}

// Changed counts a change of the timer state's field (watch's change
// fields: current_period, cpu_dma_latency, ...).
func (m *Metrics) Changed(field string) {
	if m != nil {
		m.changes.WithLabelValues(field).Inc()
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
