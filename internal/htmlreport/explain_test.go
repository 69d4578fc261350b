package htmlreport

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/printable/printabletest"
)

// explanation is a result with a name and a context that are both markup
// and terminal controls, and an unexplained part in each wait.
func explanation() *Explanation {
	name := hostile + printabletest.Forged
	return &Explanation{
		Summary:    []string{"layer 1: root and tracefs", "threshold: later than 500.0 µs (--over): 2 late waits"},
		Observer:   []string{"observer effect: 20 traced and 10 untraced waits", "  no difference beyond the intervals"},
		Late:       2,
		LatenessNs: 3_000_000,
		Causes: []ExplainedCause{
			{Cause: "blocking thread", Ns: 2_000_000, Share: 2.0 / 3, Waits: 2, Names: []ExplainedName{{Name: name, Ns: 2_000_000}}},
			{Cause: "unexplained", Ns: 1_000_000, Share: 1.0 / 3, Waits: 2},
		},
		Worst: []ExplainedWait{
			{Index: 7, LatenessNs: 2_000_000, Parts: []ExplainedPart{{Cause: "blocking thread", Name: name, Ns: 1_990_000}, {Cause: "unexplained", Ns: 10_000}}},
			{Index: 3, LatenessNs: 1_000_000, Parts: []ExplainedPart{{Cause: "unexplained", Ns: 990_000}, {Cause: "IRQ delay", Context: name, Ns: 10_000}}},
		},
		Notes: []string{"a note"},
	}
}

// TestExplainPage draws explain's page: both charts, a legend naming
// every cause, the unexplained parts drawn and labelled, the observer
// effect and the layer as the text says them.
func TestExplainPage(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, measureFile(spread(10), ""), explanation()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"<title>tickscope explain</title>", "<h1>tickscope explain</h1>",
		"layer 1: root and tracefs", "observer effect: 20 traced and 10 untraced waits",
		"By cause: share of the 2 late waits' lateness (3000.0 µs)", "The worst 2 waits",
		">wait 7</text>", ">wait 3</text>", ">blocking thread</text>",
		"unexplained 10.0 µs", "unexplained 990.0 µs", "<span><i style=\"background:#555555\"></i>unexplained</span>",
		"<span><i style=\"background:#16a085\"></i>IRQ delay</span>", "note: a note",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	if n := strings.Count(page, `<svg class="chart"`); n != 2 {
		t.Errorf("%d charts, want 2", n)
	}
	// Two bars of three segments and two of the aggregate.
	if n := strings.Count(page, "<rect x=") - strings.Count(page, `<rect x="0" y="0" width="100%"`); n != 6 {
		t.Errorf("%d bars and segments, want 6", n)
	}
}

// TestExplainPageEscapes draws names that are markup and terminal
// controls: as text on the page, escaped as the text escapes them.
func TestExplainPageEscapes(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, measureFile(spread(10), ""), explanation()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<script", "<img"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page carries a name's %q as markup", bad)
		}
	}
	if !strings.Contains(page, "&lt;script&gt;") {
		t.Error("the page does not show the name as text")
	}
	printabletest.TerminalSafe(t, "explain's page", page)
}

// TestExplainPageNothingLate is a run without a late wait: no chart, a
// sentence.
func TestExplainPageNothingLate(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, measureFile(spread(10), ""), &Explanation{Summary: []string{"layer 0: asked for"}}); err != nil {
		t.Fatal(err)
	}
	if page := b.String(); strings.Contains(page, "<svg") || !strings.Contains(page, "nothing to explain") {
		t.Errorf("a run without late waits draws:\n%s", page)
	}
}
