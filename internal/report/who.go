package report

import (
	"fmt"
	"time"

	"github.com/tickscope/tickscope/internal/printable"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/who"
)

// HoldText says what a hold is, for a line of --watch. The process's name
// is its own choice: made printable.
func HoldText(h who.Hold) string {
	h.Name = printable.Line(h.Name)
	switch h.What {
	case who.WhatPeriod:
		return fmt.Sprintf("process %d %s holds %s ms", h.PID, h.Name, timerinfo.FormatPeriodMS(uint32(h.Value)))
	case who.WhatTimer:
		return fmt.Sprintf("the timer runs at %s ms", timerinfo.FormatPeriodMS(uint32(h.Value)))
	case who.WhatDMAInForce:
		return "cpu_dma_latency in force is " + DMAValue(int32(h.Value))
	case who.WhatDMALatency:
		return fmt.Sprintf("process %d %s holds /dev/cpu_dma_latency", h.PID, h.Name)
	case who.WhatSlack:
		return fmt.Sprintf("process %d thread %d %s has timer slack %v", h.PID, h.TID, h.Name, time.Duration(h.Value))
	case who.WhatRealTime:
		return fmt.Sprintf("process %d thread %d %s runs priority %d", h.PID, h.TID, h.Name, h.Value)
	}
	return fmt.Sprintf("%s %d", h.What, h.Value)
}

// DMAValue is a cpu_dma_latency value, saying when it is the default (no
// request).
func DMAValue(us int32) string {
	if us == timerinfo.DMALatencyDefaultUs {
		return fmt.Sprintf("%d µs (no request)", us)
	}
	return fmt.Sprintf("%d µs", us)
}
