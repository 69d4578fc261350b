// Package watch is tickscope watch without the OS: what changed between
// two reads of the timer state (timerstate.ReadState), the loop that reads the state every --every
// and measures a burst of waits every --measure-every on an injected clock,
// the run's summary (time at each period, the lateness distribution over
// the run, the number of changes), the JSON-lines log (docs/json.md) and
// the text.
package watch

import (
	"fmt"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/timerstate"
)

// Change is one field of the state that changed between two reads.
type Change struct {
	Field string `json:"field"`
	From  string `json:"from"`
	To    string `json:"to"`
}

// Changes lists what differs from prev to next, in a fixed order.
func Changes(prev, next timerstate.State) []Change {
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

func holderText(h *timerstate.Holder) string {
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
		text += ", for " + strings.Join(h.While, ", ") + ": " + timerstate.HoldingFor(h.HoldingFor) + " runs"
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
func periodKey(s timerstate.State) string {
	if s.Current100ns != 0 {
		return periodText(s.Current100ns)
	}
	if s.TickNs != 0 || s.DMALatencyUs != nil {
		return "cpu_dma_latency " + dmaText(s.DMALatencyUs)
	}
	return "unknown"
}
