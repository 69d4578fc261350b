package htmlreport

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"

	"github.com/tickscope/tickscope/internal/attribution"
	"github.com/tickscope/tickscope/internal/printable"
)

// Explanation is explain's result as its page draws it (internal/explain
// fills it from its own): the text's header and observer-effect lines,
// the aggregate by cause and the worst waits, each split into causes.
// Names and contexts are as they came (a thread's comm, an IRQ's
// handler); the page shows them as the text does (printable.Line), and
// escaped.
type Explanation struct {
	// Summary is the text's header, line by line: the layer and why, the
	// waits and their lateness, the threshold, the trace.
	Summary []string
	// Observer is the text's observer-effect lines (none at layer 0).
	Observer []string
	// Late is the number of late waits; LatenessNs their lateness (armed
	// late ones apart, as in Causes).
	Late       int
	LatenessNs int64
	// Causes are the aggregate's, worst first.
	Causes []ExplainedCause
	// Worst are the waits shown one by one, worst first.
	Worst []ExplainedWait
	// Notes are the text's notes, as the text prints them.
	Notes []string
}

// ExplainedCause is one cause's part of all late waits' lateness.
type ExplainedCause struct {
	Cause string
	Ns    int64
	Share float64
	Waits int
	// Names are who did it, worst first.
	Names []ExplainedName
}

// ExplainedName is who, and how much.
type ExplainedName struct {
	Name string
	Ns   int64
}

// ExplainedWait is one late wait: its lateness split into Parts, in the
// order the attribution gives them.
type ExplainedWait struct {
	Index         int
	LatenessNs    int64
	ArmedLate     bool
	NotAttributed bool
	Parts         []ExplainedPart
}

// ExplainedPart is one cause of a wait's lateness.
type ExplainedPart struct {
	Cause, Name, Context string
	Ns                   int64
}

// causeColors give each of the attribution's causes one colour on both
// charts; a cause not listed (Windows' own) takes the next of
// extraColors. The unexplained part is a dark grey, drawn and labelled
// like any other.
var causeColors = map[string]string{
	string(attribution.KindRunQueue):      "#2a6fb0",
	string(attribution.KindBlocking):      "#c0392b",
	string(attribution.KindThread):        "#e67e22",
	string(attribution.KindSlack):         "#8e44ad",
	string(attribution.KindIRQDelay):      "#16a085",
	string(attribution.KindTimerIRQ):      "#27ae60",
	string(attribution.KindIRQ):           "#d4ac0d",
	string(attribution.KindSoftirq):       "#a04000",
	string(attribution.KindNMI):           "#641e16",
	string(attribution.KindRemote):        "#1abc9c",
	string(attribution.KindIdleExit):      "#5dade2",
	string(attribution.KindReturn):        "#af7ac5",
	string(attribution.KindSelfBlock):     "#f1948a",
	string(attribution.KindArmedLate):     "#7f8c8d",
	string(attribution.KindNotAttributed): "#bdc3c7",
	string(attribution.KindUnexplained):   "#555555",
}

var extraColors = []string{"#2e4053", "#b9770e", "#117864", "#6c3483", "#943126"}

// palette gives causes their colours, extraColors in order of first sight.
type palette struct {
	extra map[string]string
}

func (p *palette) color(cause string) string {
	if c, ok := causeColors[cause]; ok {
		return c
	}
	if p.extra == nil {
		p.extra = map[string]string{}
	}
	if c, ok := p.extra[cause]; ok {
		return c
	}
	c := extraColors[len(p.extra)%len(extraColors)]
	p.extra[cause] = c
	return c
}

// us is ns as µs with one decimal, as the text writes it.
func us(ns int64) string { return fmt.Sprintf("%.1f µs", float64(ns)/1000) }

// outside is a name from outside tickscope as the text shows it; esc or
// html.EscapeString makes it text on the page.
func outside(s string) string { return printable.Line(s) }

func (e *ExplainedPart) label() string {
	s := outside(e.Cause)
	if e.Name != "" {
		s += " " + outside(e.Name)
	}
	if e.Context != "" {
		s += " (" + outside(e.Context) + ")"
	}
	return s
}

// rowH is the height of one horizontal bar's row, in px.
const rowH = 22.0

func (p *page) explanation(e *Explanation) {
	p.body.WriteString("<h2>Run</h2>\n")
	for _, l := range e.Summary {
		fmt.Fprintf(&p.body, "<p>%s</p>\n", html.EscapeString(l))
	}
	if len(e.Observer) > 0 {
		p.body.WriteString("<h2>Observer effect</h2>\n<pre style=\"white-space:pre-wrap\">")
		p.body.WriteString(html.EscapeString(strings.Join(e.Observer, "\n")))
		p.body.WriteString("</pre>\n")
	}
	if len(e.Causes) == 0 {
		p.body.WriteString("<p>No wait was later than the threshold: nothing to explain.</p>\n")
		p.notes(e.Notes)
		return
	}
	var pal palette
	p.aggregate(e, &pal)
	p.worst(e, &pal)
	p.notes(e.Notes)
}

func (p *page) notes(ns []string) {
	for _, n := range ns {
		fmt.Fprintf(&p.body, "<p>note: %s</p>\n", html.EscapeString(n))
	}
}

// aggregate draws every cause's share of all late waits' lateness as a
// horizontal bar, worst first, with its names after it.
func (p *page) aggregate(e *Explanation, pal *palette) {
	rows := make([]string, len(e.Causes))
	for i, c := range e.Causes {
		rows[i] = outside(c.Cause)
	}
	hi := 0.0
	for _, c := range e.Causes {
		hi = math.Max(hi, c.Share*100)
	}
	hi = math.Min(100, math.Max(10, math.Ceil(hi/10)*10))
	ch := newChartOpts(chartOpts{
		title:  fmt.Sprintf("By cause: share of the %d late waits' lateness (%s)", e.Late, us(e.LatenessNs)),
		xLabel: "share of all late waits' lateness (%)", x0: 0, x1: hi, y0: 0, y1: float64(len(rows)),
		height: rowH * float64(len(rows)), left: 180, yRows: rows,
	})
	var trows [][]string
	for i, c := range e.Causes {
		y := float64(len(rows) - i)
		names := make([]string, 0, 3)
		var all []string
		for j, n := range c.Names {
			s := outside(n.Name) + " " + us(n.Ns)
			all = append(all, s)
			if j < 3 {
				names = append(names, s)
			}
		}
		if len(c.Names) > 3 {
			names = append(names, fmt.Sprintf("%d more", len(c.Names)-3))
		}
		title := fmt.Sprintf("%s: %s, %s, in %d waits", outside(c.Cause), us(c.Ns), pct(c.Share), c.Waits)
		ch.rectXY(0, c.Share*100, y-0.8, y-0.2, pal.color(c.Cause), 1, title)
		label := pct(c.Share)
		if len(names) > 0 {
			label += ": " + strings.Join(names, ", ")
		}
		ch.rowLabel(c.Share*100, y-0.5, label)
		trows = append(trows, []string{outside(c.Cause), us(c.Ns), pct(c.Share), strconv.Itoa(c.Waits), strings.Join(all, ", ")})
	}
	p.figure("Aggregate", table([]string{"cause", "lateness", "share", "waits", "names"}, trows), ch)
}

// worst draws each of the worst waits as a horizontal bar on a time axis
// from its deadline, its segments its causes in µs, the unexplained part
// drawn and labelled like any other.
func (p *page) worst(e *Explanation, pal *palette) {
	if len(e.Worst) == 0 {
		return
	}
	rows := make([]string, len(e.Worst))
	var most int64
	for i, w := range e.Worst {
		rows[i] = fmt.Sprintf("wait %d", w.Index)
		most = max(most, w.LatenessNs)
	}
	// Room after the longest bar for the label of an unexplained part
	// too narrow to hold it.
	hi := math.Max(float64(most)/1000*1.3, 1)
	ch := newChartOpts(chartOpts{
		title:  fmt.Sprintf("The worst %d waits: each one's lateness by cause", len(e.Worst)),
		xLabel: "time after the deadline (µs)", x0: 0, x1: hi, y0: 0, y1: float64(len(rows)),
		height: rowH * float64(len(rows)), left: 100, yRows: rows,
	})
	seen := map[string]bool{}
	var legend []string
	var trows [][]string
	for i, w := range e.Worst {
		y := float64(len(rows) - i)
		at := 0.0
		var parts []string
		var unexplained [][3]float64
		for _, part := range w.Parts {
			color := pal.color(part.Cause)
			if !seen[part.Cause] {
				seen[part.Cause] = true
				legend = append(legend, outside(part.Cause), color)
			}
			x1 := at + float64(part.Ns)/1000
			title := fmt.Sprintf("wait %d: %s %s", w.Index, part.label(), us(part.Ns))
			ch.rectXY(at, x1, y-0.8, y-0.2, color, 1, title)
			if part.Cause == string(attribution.KindUnexplained) {
				unexplained = append(unexplained, [3]float64{at, x1, float64(part.Ns)})
			}
			parts = append(parts, part.label()+" "+us(part.Ns))
			at = x1
		}
		// The unexplained part is labelled on the bar, never left to
		// the legend alone.
		for _, u := range unexplained {
			ch.segmentLabel(u[0], u[1], at, y-0.5, "unexplained "+us(int64(u[2])))
		}
		flags := ""
		switch {
		case w.ArmedLate:
			flags = "armed late"
		case w.NotAttributed:
			flags = "not attributed"
		}
		trows = append(trows, []string{strconv.Itoa(w.Index), us(w.LatenessNs), flags, strings.Join(parts, "; ")})
	}
	ch.legend(legend...)
	p.figure("Worst waits", table([]string{"wait", "lateness", "note", "causes"}, trows), ch)
}
