// Package watch is tickscope watch without the OS: the timer state read
// through the query path (ReadState, which the ui command reads too), what
// changed between two reads, the loop that reads the state every --every
// and measures a burst of waits every --measure-every on an injected clock,
// the run's summary (time at each period, the lateness distribution over
// the run, the number of changes), and the JSON-lines log (docs/json.md).
package watch

import (
	"fmt"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/hold"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// State is the timer state at one moment, as the query path reports it.
// Windows fields are set on Windows (and the model), Linux fields on Linux.
type State struct {
	// Windows: the timer periods NtQueryTimerResolution reports (100 ns).
	Current100ns  uint32 `json:"current_100ns,omitempty"`
	Finest100ns   uint32 `json:"finest_100ns,omitempty"`
	Coarsest100ns uint32 `json:"coarsest_100ns,omitempty"`
	// RequestModel is query's request_model (Windows).
	RequestModel string `json:"request_model,omitempty"`
	// GlobalKeyInForce is whether GlobalTimerResolutionRequests is in force
	// in the running boot (Windows; nil elsewhere).
	GlobalKeyInForce *bool `json:"global_key_in_force,omitempty"`
	// Linux: the scheduler tick (1/HZ), the aggregate /dev/cpu_dma_latency
	// (nil when it cannot be read: it needs root) and the reading thread's
	// timer slack, which every thread of tickscope inherits.
	TickNs       int64  `json:"tick_ns,omitempty"`
	DMALatencyUs *int32 `json:"cpu_dma_latency_us,omitempty"`
	TimerSlackNs int64  `json:"timer_slack_ns,omitempty"`
	Simulated    bool   `json:"simulated,omitempty"`
	// Holder is tickscope's startup holder (the one apply --persist
	// starts), read by the loop at each burst rather than by ReadState:
	// telling whether it runs takes its lock for a moment.
	Holder *Holder `json:"startup_holder,omitempty"`
}

// Holder is whether tickscope's startup holder runs, and what it holds.
type Holder struct {
	Running bool `json:"running"`
	PID     int  `json:"pid,omitempty"`
	// Held is the setting a running holder holds, from its definition
	// (hold.StartupHeld); nil when not running or unknown.
	Held *timerinfo.Setting `json:"held,omitempty"`
	// While are the programs a holder with --while holds for (its
	// definition's), and HoldingFor their processes running now as this
	// process's scan sees them (the holder holds Held only while it sees
	// some; its own state is not read); WhileError is why they could not
	// be looked for.
	While      []string              `json:"while,omitempty"`
	HoldingFor []hold.ProgramRunning `json:"holding_for,omitempty"`
	WhileError string                `json:"while_error,omitempty"`
}

// ReadHolder reads whether the startup holder runs (nil sys: unknown).
func ReadHolder(sys seam.System) *Holder {
	if sys == nil {
		return nil
	}
	pid, running := sys.Holder()
	return &Holder{Running: running, PID: pid}
}

// ReadState reads the timer state now through the host's query path. It
// changes nothing. It is the one "read the timer state" of watch, the
// metrics endpoint and ui.
func ReadState(host seam.Host) (State, error) {
	q, err := host.Query()
	if err != nil {
		return State{}, err
	}
	return StateOf(q), nil
}

// StateOf is the state a query reports.
func StateOf(q *timerinfo.Report) State {
	var s State
	if w := q.Windows; w != nil {
		s.Current100ns, s.Finest100ns, s.Coarsest100ns = w.Current100ns, w.Finest100ns, w.Coarsest100ns
		s.RequestModel = w.RequestModel
		inForce := w.RequestModel == timerinfo.RequestModelGlobalKey
		s.GlobalKeyInForce = &inForce
		s.Simulated = q.Arch == "simulated"
	}
	if l := q.Linux; l != nil {
		if l.HZ > 0 {
			s.TickNs = int64(time.Second) / l.HZ
		}
		if l.CPUDMALatencyUs != nil {
			v := *l.CPUDMALatencyUs
			s.DMALatencyUs = &v
		}
		s.TimerSlackNs = l.TimerSlackNs
	}
	return s
}

// CurrentPeriod is the timer interrupt's period now: Windows' current
// period, Linux's scheduler tick; 0 when unknown.
func (s State) CurrentPeriod() time.Duration {
	if s.Current100ns != 0 {
		return time.Duration(s.Current100ns) * 100
	}
	return time.Duration(s.TickNs)
}

// Change is one field of the state that changed between two reads.
type Change struct {
	Field string `json:"field"`
	From  string `json:"from"`
	To    string `json:"to"`
}

// Changes lists what differs from prev to next, in a fixed order.
func Changes(prev, next State) []Change {
	var out []Change
	add := func(field string, from, to string) {
		if from != to {
			out = append(out, Change{Field: field, From: from, To: to})
		}
	}
	add("current_period", periodText(prev.Current100ns), periodText(next.Current100ns))
	add("finest_period", periodText(prev.Finest100ns), periodText(next.Finest100ns))
	add("coarsest_period", periodText(prev.Coarsest100ns), periodText(next.Coarsest100ns))
	add("request_model", prev.RequestModel, next.RequestModel)
	add("global_key_in_force", boolText(prev.GlobalKeyInForce), boolText(next.GlobalKeyInForce))
	add("tick", nsText(prev.TickNs), nsText(next.TickNs))
	add("cpu_dma_latency", dmaText(prev.DMALatencyUs), dmaText(next.DMALatencyUs))
	add("timer_slack", nsText(prev.TimerSlackNs), nsText(next.TimerSlackNs))
	add("startup_holder", holderText(prev.Holder), holderText(next.Holder))
	return out
}

func holderText(h *Holder) string {
	switch {
	case h == nil:
		return ""
	case !h.Running:
		return "not running"
	}
	text := "running"
	if h.PID != 0 {
		text = fmt.Sprintf("running (process %d)", h.PID)
	}
	switch {
	case len(h.While) > 0 && h.WhileError != "":
		text += ", for " + strings.Join(h.While, ", ") + " (" + h.WhileError + ")"
	case len(h.While) > 0 && len(h.HoldingFor) > 0:
		text += ", for " + strings.Join(h.While, ", ") + ": " + hold.HoldingFor(h.HoldingFor) + " runs"
	case len(h.While) > 0:
		text += ", for " + strings.Join(h.While, ", ") + ": none runs"
	}
	return text
}

func periodText(p uint32) string {
	if p == 0 {
		return ""
	}
	return timerinfo.FormatPeriodMS(p) + " ms"
}

func boolText(b *bool) string {
	if b == nil {
		return ""
	}
	return fmt.Sprint(*b)
}

func nsText(ns int64) string {
	if ns == 0 {
		return ""
	}
	return time.Duration(ns).String()
}

func dmaText(us *int32) string {
	switch {
	case us == nil:
		return "unreadable"
	case *us == timerinfo.DMALatencyDefaultUs:
		return "none held"
	}
	return fmt.Sprintf("%d µs", *us)
}

// periodKey is what the summary's time is counted against: the Windows
// period, or on Linux the DMA latency in force.
func (s State) periodKey() string {
	if s.Current100ns != 0 {
		return periodText(s.Current100ns)
	}
	if s.TickNs != 0 || s.DMALatencyUs != nil {
		return "cpu_dma_latency " + dmaText(s.DMALatencyUs)
	}
	return "unknown"
}
