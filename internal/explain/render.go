package explain

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tickscope/tickscope/internal/printable"
	"github.com/tickscope/tickscope/internal/stats"
)

// us formats ns as µs with one decimal.
func us(ns int64) string { return fmt.Sprintf("%.1f µs", float64(ns)/1000) }

// kib formats bytes as KiB.
func kib(b int64) string { return fmt.Sprintf("%d KiB", (b+1023)/1024) }

func pct(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

// named is a cause with its name, or its context in parentheses, made
// printable: names come from other processes (comm) and drivers (IRQ
// handlers), and a context may hold a comm.
func named(c Cause) string {
	s := printable.Line(c.Cause)
	if c.Name != "" {
		s += " " + printable.Line(c.Name)
	}
	if c.Context != "" {
		s += " (" + printable.Line(c.Context) + ")"
	}
	return s
}

// writeObserver prints tracing's cost as measured: the lateness of the
// traced and untraced chunks' waits, and whether tracing changed it.
func writeObserver(w io.Writer, e *ObserverEffect) {
	fmt.Fprintf(w, "observer effect: %d traced and %d untraced waits, interleaved in chunks of %d and %d\n", e.Traced, e.Untraced, e.ChunkWaits, e.OffWaits)
	if e.Traced == 0 || e.Untraced == 0 {
		fmt.Fprintln(w, "  not measured: the run stopped before an untraced chunk")
		return
	}
	diff := func(iv stats.Interval) string {
		if iv.Unbounded {
			return fmt.Sprintf("%+.1f µs, too few waits to bound it", iv.Estimate/1000)
		}
		return fmt.Sprintf("%+.1f µs, 95%% interval %+.1f..%+.1f", iv.Estimate/1000, iv.Lo/1000, iv.Hi/1000)
	}
	fmt.Fprintf(w, "  lateness p50 %s traced, %s untraced (%s)\n", us(e.TracedP50Ns), us(e.UntracedP50Ns), diff(e.P50Diff))
	fmt.Fprintf(w, "  lateness p99 %s traced, %s untraced (%s)\n", us(e.TracedP99Ns), us(e.UntracedP99Ns), diff(e.P99Diff))
	if e.Changed {
		var which []string
		if e.P50Diff.Lo > 0 && !e.P50Diff.Unbounded {
			which = append(which, "p50")
		}
		if e.P99Diff.Lo > 0 && !e.P99Diff.Unbounded {
			which = append(which, "p99")
		}
		fmt.Fprintf(w, "  tracing made the %s later beyond its interval: the causes explained are those of traced waits\n", strings.Join(which, " and "))
	} else {
		fmt.Fprintln(w, "  no difference beyond the intervals")
	}
	fmt.Fprintln(w, "  untraced: the instance's recording off, its events left enabled (the tracepoints' own entry is in both)")
}

// writeContexts prints where the causes that happen to a CPU happened
// (an IRQ delay's CPU and what it ran or which idle state it was in, a
// remote wake-up's CPU), worst first: apart from the names, because the
// thread an IRQ delay found running is not who delayed it.
func writeContexts(w io.Writer, g Aggregate) {
	type row struct {
		cause string
		Context
	}
	var rows []row
	for _, s := range g.Causes {
		for _, c := range s.Contexts {
			rows = append(rows, row{printable.Line(s.Cause), c})
		}
	}
	if len(rows) == 0 {
		return
	}
	slices.SortStableFunc(rows, func(p, q row) int { return cmp.Compare(q.Ns, p.Ns) })
	fmt.Fprintln(w, "\nby context (where it happened, not who did it):")
	for j, r := range rows {
		if j == 10 {
			break
		}
		fmt.Fprintf(w, "  %-26s %-32s %12s %6s  in %d waits\n", r.cause, printable.Line(r.Context.Context), us(r.Ns), pct(r.Share), r.Waits)
	}
}

// WriteText prints the result: the header (layer, threshold, late
// waits), the worst waits one by one with their top causes, then the
// aggregate by cause, by context and by name, and the window's counters.
func (r *Result) WriteText(w io.Writer, worst int) {
	r.writeHeader(w)
	if e := r.ObserverEffect; e != nil {
		writeObserver(w, e)
	}
	if len(r.Late) == 0 {
		fmt.Fprintln(w, "\nno wait was later than the threshold: nothing to explain")
	} else {
		fmt.Fprintf(w, "\nworst waits (%d of %d):\n", min(worst, len(r.Late)), len(r.Late))
		fmt.Fprintf(w, "  %6s  %12s  %s\n", "wait", "lateness", "top causes")
		for i, l := range r.Late {
			if i == worst {
				break
			}
			var parts []string
			for j, c := range l.Causes {
				if j == 3 {
					break
				}
				parts = append(parts, fmt.Sprintf("%s %s (%s)", named(c), us(c.Ns), pct(c.Share)))
			}
			fmt.Fprintf(w, "  %6d  %12s  %s\n", l.Index, us(l.LatenessNs), strings.Join(parts, "; "))
		}
		g := r.Aggregate
		fmt.Fprintf(w, "\nby cause (%d late waits, %s of lateness, %s explained):\n", g.Late, us(g.LatenessNs), pct(g.ExplainedShare))
		for _, s := range g.Causes {
			var names []string
			for j, n := range s.Names {
				if j == 3 {
					break
				}
				names = append(names, fmt.Sprintf("%s %s", printable.Line(n.Name), pct(n.Share)))
			}
			fmt.Fprintf(w, "  %-26s %12s %6s  in %d waits", printable.Line(s.Cause), us(s.Ns), pct(s.Share), s.Waits)
			if len(names) > 0 {
				fmt.Fprintf(w, "  %s", strings.Join(names, ", "))
			}
			fmt.Fprintln(w)
		}
		if g.ArmedLate > 0 {
			fmt.Fprintf(w, "  armed late: %d waits, %s inherited from the wait before (counted there, not here)\n", g.ArmedLate, us(g.ArmedLateNs))
		}
		writeContexts(w, g)
		if len(g.Names) > 0 {
			fmt.Fprintln(w, "\nby name:")
			for j, n := range g.Names {
				if j == 10 {
					break
				}
				fmt.Fprintf(w, "  %-32s %12s %6s\n", printable.Line(n.Name), us(n.Ns), pct(n.Share))
			}
		}
	}
	if win := r.Window; win != nil {
		fmt.Fprintln(w, "\nover the run (/proc, every CPU):")
		row := func(label string, cs []Count) {
			var parts []string
			for j, c := range cs {
				if j == 6 {
					break
				}
				name := c.Name
				if f := strings.Fields(c.Desc); len(f) > 0 && name != "" && name[0] >= '0' && name[0] <= '9' {
					name += " (" + f[len(f)-1] + ")" // an IRQ line: its handler
				}
				parts = append(parts, fmt.Sprintf("%s %d", printable.Line(name), c.Count))
			}
			if len(parts) == 0 {
				parts = []string{"none"}
			}
			fmt.Fprintf(w, "  %-11s %s\n", label, strings.Join(parts, ", "))
		}
		row("interrupts", win.Interrupts)
		row("softirqs", win.Softirqs)
		fmt.Fprintf(w, "  %-11s %s\n", "steal", us(win.StealNs))
		if len(win.Idle) > 0 {
			var parts []string
			for _, s := range win.Idle {
				parts = append(parts, fmt.Sprintf("%s %d (exit %d µs)", printable.Line(s.State), s.Entries, s.LatencyUs))
			}
			fmt.Fprintf(w, "  %-11s %s\n", "idle", strings.Join(parts, ", "))
		}
		// Notes carry the OS's error texts, which may quote what another user
		// named (a path, a process).
		for _, n := range win.Notes {
			fmt.Fprintf(w, "  note: %s\n", printable.Message(n))
		}
	} else if len(r.Notes) > 0 {
		fmt.Fprintln(w) // the notes, which say why, after the tables
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", printable.Message(n))
	}
}

// writeHeader prints the run: the layer and why, the waits and their
// lateness, the threshold, and the trace.
func (r *Result) writeHeader(w io.Writer) {
	fmt.Fprintf(w, "layer %d: %s\n", r.Layer, printable.Message(r.LayerWhy))
	fmt.Fprintf(w, "%d waits of %s with %s (slack %s): lateness p50 %s, p99 %s\n",
		r.Waits, us(r.DelayNs), r.Method, us(r.SlackNs), us(r.LatenessP50Ns), us(r.LatenessP99Ns))
	if r.Load != nil {
		fmt.Fprintf(w, "load: %s\n", r.Load)
	}
	from := "the run's own p99"
	if r.ThresholdFrom == "--over" {
		from = "--over"
	}
	fmt.Fprintf(w, "threshold: later than %s (%s): %d late waits\n", us(r.ThresholdNs), from, len(r.Late))
	if r.Stopped {
		fmt.Fprintln(w, "stopped early: the result covers the waits taken")
	}
	if r.Trace != nil {
		t := r.Trace
		kind := t.Kind()
		fmt.Fprintf(w, "trace: %s %s, %d events, %d lost", kind, printable.Line(t.Instance), t.Events, t.Lost)
		if t.Removed {
			fmt.Fprint(w, ", removed after the run")
		}
		fmt.Fprintln(w)
		switch {
		case t.Mounted && t.LeftMounted == "":
			fmt.Fprintln(w, "trace: tracefs was not mounted: mounted for the run and unmounted after")
		case t.Mounted:
			fmt.Fprintln(w, "trace: tracefs was not mounted: mounted for the run")
		}
		if t.LeftMounted != "" {
			fmt.Fprintf(w, "trace: tracefs left mounted at %s: in use\n", printable.Line(t.LeftMounted))
		}
		if t.RemovedLeftover {
			fmt.Fprintf(w, "trace: a leftover %s of ours, from a run that did not end, was ended first\n", kind)
		}
		if len(t.Missing) > 0 {
			fmt.Fprintf(w, "trace: events this system lacks: %s\n", printable.Line(strings.Join(t.Missing, ", ")))
		}
		if f := t.Flight; f != nil {
			fmt.Fprintf(w, "flight recorder: kept %d of %d pages read, for the late waits' windows; at most %d held at once (%s)\n",
				f.PagesKept, f.PagesRead, f.PeakPages, kib(int64(f.PeakPages)*int64(f.PageBytes)))
			fmt.Fprintf(w, "flight recorder: %d of %d late waits not covered (events lost in their windows): not attributed\n", f.NotCovered, len(r.Late))
		}
	}
}
