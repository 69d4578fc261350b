package watch_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/printable/printabletest"
	"github.com/tickscope/tickscope/internal/watch"
	"github.com/tickscope/tickscope/internal/who"
)

// forged and terminalSafe are the renderers' shared hostile string and
// check (printabletest).
const forged = printabletest.Forged

var terminalSafe = printabletest.TerminalSafe

// TestStringsFromOutsideArePrintable: every text of watch's shows that shows a
// string tickscope did not write shows it escaped.
func TestStringsFromOutsideArePrintable(t *testing.T) {
	var b bytes.Buffer
	var errw bytes.Buffer
	holders := []who.Hold{{PID: 7, Name: forged, What: who.WhatDMALatency}}
	for _, e := range []watch.Event{
		{Time: time.Unix(0, 0), Event: watch.EventChange, Changes: []watch.Change{{Field: "startup_holder", From: forged, To: forged}}, Holders: &holders},
		{Time: time.Unix(0, 0), Event: watch.EventChange, Changes: []watch.Change{{Field: "tick", From: "a", To: "b"}}, HoldersError: forged},
		{Time: time.Unix(0, 0), Event: watch.EventError, Error: forged},
	} {
		if err := watch.WriteEvent(&b, &errw, e, false); err != nil {
			t.Fatal(err)
		}
	}
	terminalSafe(t, "watch", b.String())
	terminalSafe(t, "watch's warnings", errw.String())

}
