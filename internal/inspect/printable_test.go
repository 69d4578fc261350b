package inspect_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/inspect"
	"github.com/tickscope/tickscope/internal/printable/printabletest"
	"github.com/tickscope/tickscope/internal/who"
)

// forged and terminalSafe are the renderers' shared hostile string and
// check (printabletest).
const forged = printabletest.Forged

var terminalSafe = printabletest.TerminalSafe

// TestStringsFromOutsideArePrintable: every text of inspect's that shows a
// string tickscope did not write shows it escaped.
func TestStringsFromOutsideArePrintable(t *testing.T) {
	var b bytes.Buffer
	rep := &inspect.WhoReport{OS: "linux", Elevated: true, Linux: &who.Linux{
		DMALatencyHolders: []who.Process{{PID: 7, Name: forged}},
		Slack:             []who.Thread{{PID: 7, TID: 8, Name: forged, SlackNs: 1}},
		RealTime:          []who.Thread{{PID: 7, TID: 9, Name: forged, Policy: "SCHED_FIFO", Priority: 1}},
		IdleDisabled:      []who.IdleState{{State: "state1", Name: forged, CPUs: []int{0}}},
		Unreadable:        []who.Unreadable{{What: forged, Why: forged}},
	}}
	(&inspect.WhoText{W: &b}).Read(rep)
	terminalSafe(t, "who (Linux)", b.String())

	b.Reset()
	rep = &inspect.WhoReport{OS: "windows", Elevated: true, Windows: &inspect.WhoWindows{Coarsest100ns: 156250, Finest100ns: 5000, Current100ns: 5000,
		Holders: []who.Holder{{PID: 4, Image: forged, Period100ns: 5000}}}}
	(&inspect.WhoText{W: &b}).Read(rep)
	terminalSafe(t, "who (Windows)", b.String())

	b.Reset()
	wt := &inspect.WhoText{W: &b}
	wt.Changed(who.Change{At: time.Unix(0, 0), Started: true, Hold: who.Hold{PID: 7, Name: forged, What: who.WhatDMALatency}})
	terminalSafe(t, "who --watch", b.String())

	b.Reset()
	inspect.WriteStartup(&b, &inspect.StartupState{Mechanism: "task", Installed: true, Ours: true, Exe: forged, Args: []string{forged}, Holds: forged, Log: forged})
	inspect.WriteStartup(&b, &inspect.StartupState{Mechanism: "task", Error: forged})
	terminalSafe(t, "status's startup holder", b.String())

}
