package watch

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/printable"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/timerstate"
)

// watchTime is how watch stamps its lines: local time to the millisecond.
const watchTime = "2006-01-02 15:04:05.000"

// WriteEvent is watch's output of one event: with asJSON its JSON
// line (docs/json.md); else text: a line at the start, one line per change
// (what changed, from and to), nothing per burst, and the summary at the
// end, and an error (the run goes on) as a warning on errw.
func WriteEvent(w, errw io.Writer, e Event, asJSON bool) error {
	if asJSON {
		return WriteLine(w, e)
	}
	stamp := e.Time.Local().Format(watchTime)
	switch e.Event {
	case EventStart:
		fmt.Fprintf(w, "%s  watching: %s\n", stamp, StateText(*e.State))
		fmt.Fprintf(w, "%s  the state read every %v, %d %s waits of %s timed every %v; ESC or Ctrl+C ends it\n",
			stamp, time.Duration(e.Start.EveryNs), e.Start.Waits, e.Start.Method, report.Delay(e.Start.DelayNs), time.Duration(e.Start.MeasureEveryNs))
		writeWatchHolders(w, stamp, e)
	case EventChange:
		parts := make([]string, len(e.Changes))
		for i, c := range e.Changes {
			parts[i] = printable.Line(fmt.Sprintf("%s %s -> %s", changeNames[c.Field], orNone(c.From), orNone(c.To)))
		}
		fmt.Fprintf(w, "%s  %s\n", stamp, strings.Join(parts, "; "))
		writeWatchHolders(w, stamp, e)
	case EventError:
		fmt.Fprintf(errw, "tickscope: warning: %s  %s\n", stamp, printable.Message(e.Error))
	case EventSummary:
		writeWatchSummary(w, e.Summary)
	}
	return nil
}

// changeNames are the fields of a change as the text names them.
var changeNames = map[string]string{
	"current_period": "current period", "finest_period": "finest period", "coarsest_period": "coarsest period",
	"request_model": "request model", "global_key_in_force": "GlobalTimerResolutionRequests in force",
	"tick": "tick", "cpu_dma_latency": "cpu_dma_latency", "timer_slack": "timer slack", "startup_holder": "startup holder",
}

// writeWatchHolders is the holders line under a start or a change: who
// holds the timer, or why that could not be read.
func writeWatchHolders(w io.Writer, stamp string, e Event) {
	switch {
	case e.HoldersError != "":
		fmt.Fprintf(w, "%s  holders: not read (%s)\n", stamp, printable.Message(e.HoldersError))
	case e.Holders == nil:
	case len(*e.Holders) == 0:
		fmt.Fprintf(w, "%s  holders: none\n", stamp)
	default:
		parts := make([]string, len(*e.Holders))
		for i, h := range *e.Holders {
			parts[i] = report.HoldText(h)
		}
		fmt.Fprintf(w, "%s  holders: %s\n", stamp, strings.Join(parts, "; "))
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// StateText is a timer state in one line.
func StateText(s timerstate.State) string {
	var parts []string
	if s.Current100ns != 0 {
		parts = append(parts, fmt.Sprintf("current period %s ms (finest %s, coarsest %s)",
			timerinfo.FormatPeriodMS(s.Current100ns), timerinfo.FormatPeriodMS(s.Finest100ns), timerinfo.FormatPeriodMS(s.Coarsest100ns)))
	}
	if s.GlobalKeyInForce != nil {
		parts = append(parts, "GlobalTimerResolutionRequests in force: "+report.YesNo(*s.GlobalKeyInForce))
	}
	if s.TickNs != 0 {
		parts = append(parts, "tick "+time.Duration(s.TickNs).String())
	}
	if s.TickNs != 0 || s.DMALatencyUs != nil {
		switch {
		case s.DMALatencyUs == nil:
			parts = append(parts, "cpu_dma_latency unreadable (needs root)")
		case *s.DMALatencyUs == timerinfo.DMALatencyDefaultUs:
			parts = append(parts, "cpu_dma_latency none held")
		default:
			parts = append(parts, fmt.Sprintf("cpu_dma_latency %d µs", *s.DMALatencyUs))
		}
	}
	if s.TimerSlackNs != 0 {
		parts = append(parts, "timer slack "+time.Duration(s.TimerSlackNs).String())
	}
	if h := s.Holder; h != nil {
		parts = append(parts, "startup holder "+map[bool]string{true: "running", false: "not running"}[h.Running])
	}
	return strings.Join(parts, ", ")
}

func writeWatchSummary(w io.Writer, s *Summary) {
	fmt.Fprintf(w, "watched for %v: %d reads, %d changes, %d bursts", time.Duration(s.DurationNs).Round(time.Millisecond), s.Reads, s.Changes, s.Bursts)
	if s.ReadErrors > 0 {
		fmt.Fprintf(w, ", %d reads failed", s.ReadErrors)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "time at each period")
	for _, p := range s.TimeAt {
		share := 0.0
		if s.DurationNs > 0 {
			share = 100 * float64(p.Ns) / float64(s.DurationNs)
		}
		fmt.Fprintf(w, "  %-32s %12v  %5.1f %%\n", p.Period, time.Duration(p.Ns).Round(time.Millisecond), share)
	}
	l := s.Lateness
	if l == nil || l.Waits == 0 {
		fmt.Fprintln(w, "lateness: no burst finished")
		return
	}
	fmt.Fprintf(w, "lateness of %d %s waits of %s over the run (measured): min %s, mean %s, p50 %s, p99 %s, max %s\n",
		l.Waits, l.Method, report.Delay(l.DelayNs), latenessText(l.MinNs), latenessText(l.MeanNs), bucketText(l.P50AtMostNs), bucketText(l.P99AtMostNs), latenessText(l.MaxNs))
	most := int64(0)
	for _, b := range l.Buckets {
		most = max(most, b.Count)
	}
	for _, b := range l.Buckets {
		if b.Count == 0 {
			continue
		}
		fmt.Fprintf(w, "  %-10s %8d  %s\n", bucketText(b.LeNs), b.Count, report.Bar(int(b.Count), int(most), 40))
	}
}

func latenessText(ns int64) string {
	if ns < 0 {
		return "-" + report.Delay(-ns)
	}
	return report.Delay(ns)
}

func bucketText(le int64) string {
	if le == 0 {
		return "> 100 ms"
	}
	return "≤ " + report.Delay(le)
}
