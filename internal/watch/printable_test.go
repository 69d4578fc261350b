package watch_test

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/tickscope/tickscope/internal/watch"
	"github.com/tickscope/tickscope/internal/who"
)

// forged is a string from outside tickscope as a hostile user writes it:
// a clipboard write (OSC 52), an erased line, a carriage return and a
// forged line, CSI as C1, NUL, DEL and a bidirectional override.
const forged = "\x1b]52;c;Zm9yZ2Vk\a\x1b[2K\r  recommend FORGED\n\u009b2J\x00\x7f\u202e"

// terminalSafe fails the test when out holds a character a terminal
// acts on, other than the newlines that end its lines, or a line that
// starts with the forged one.
func terminalSafe(t *testing.T, what, out string) {
	t.Helper()
	for _, r := range out {
		if r != '\n' && r != ' ' && !unicode.IsPrint(r) {
			t.Errorf("%s writes %U to the terminal:\n%q", what, r, out)
			return
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "recommend FORGED") {
			t.Errorf("%s writes a forged line:\n%s", what, out)
		}
	}
	if !strings.Contains(out, `\x1b]52;c;`) {
		t.Errorf("%s does not show the escaped string:\n%s", what, out)
	}
}

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
