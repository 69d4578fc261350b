package hold

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/printable"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/timerstate"
)

// The hold commands' text: apply and run. Warnings are the command's to print (on standard error,
// with its prefix); these write standard output.

// holdMS is a duration in ms with 4 decimals, as the hold commands print
// their checks.
func holdMS(ns int64) string { return strconv.FormatFloat(float64(ns)/1e6, 'f', 4, 64) }

// WriteSlackChange is apply --pid PID --slack D.
func WriteSlackChange(w io.Writer, c *SlackChange) {
	fmt.Fprintf(w, "timer slack of process %d (its main thread; threads it starts later inherit it)\n", c.PID)
	fmt.Fprintf(w, "  before  %v\n  after   %v\n", time.Duration(c.SlackBeforeNs), time.Duration(c.SlackAfterNs))
	fmt.Fprintf(w, "undo: %s\n", c.Undo)
}

// WriteHolding is what apply prints once the setting is held and checked.
func WriteHolding(w io.Writer, rep *HoldReport) {
	windows := rep.Reach != ""
	fmt.Fprintln(w, "holding")
	fmt.Fprintf(w, "  requested      %s\n", rep.Requested)
	if windows {
		fmt.Fprintf(w, "  granted        %s\n", rep.Granted)
	} else if rep.Granted.CPUDMALatencyUs != nil {
		fmt.Fprintf(w, "  in force       cpu_dma_latency %d µs (the smallest request of all processes)\n", *rep.Granted.CPUDMALatencyUs)
	}
	c := rep.Check
	fmt.Fprintf(w, "  check          %s 1 ms takes p50 %s ms, p99 %s ms now (%d waits, %s)\n", c.Method, holdMS(c.P50Ns), holdMS(c.P99Ns), c.Samples, c.Taken())
	if windows {
		fmt.Fprintf(w, "  request model  %s\n", rep.RequestModel)
		fmt.Fprintf(w, "  reaches        %s\n", rep.Reach)
		fmt.Fprintf(w, "  throttling     %s\n", rep.ThrottlingOptOut)
	} else {
		fmt.Fprintln(w, "  reaches        every CPU's idle-state choice, for as long as tickscope runs")
	}
	fmt.Fprintf(w, "holding until %s\n", rep.Until)
}

// WriteReleased is apply's last line.
func WriteReleased(w io.Writer, rep *HoldReport) {
	if wr := rep.While; wr != nil {
		fmt.Fprintf(w, "ended after %v (%s): the setting was held %v in all, taken %s\n", time.Duration(rep.HeldNs).Round(time.Millisecond), EndedByText[rep.EndedBy],
			time.Duration(wr.HeldNs).Round(time.Millisecond), plural(wr.Holds, "time"))
		return
	}
	fmt.Fprintf(w, "released after %v (%s)\n", time.Duration(rep.HeldNs).Round(time.Millisecond), EndedByText[rep.EndedBy])
}

// WriteWaiting is what apply --while prints when it starts to watch for
// its programs, with nothing held.
func WriteWaiting(w io.Writer, rep *HoldReport) {
	wr := rep.While
	how := fmt.Sprintf("looked for every %v", time.Duration(wr.ScanEveryNs))
	if wr.Source == timerstate.SourceEvents {
		how = fmt.Sprintf("told by the kernel's process events, and looked for every %v", time.Duration(wr.ScanEveryNs))
	}
	fmt.Fprintf(w, "waiting for %s (%s): nothing is held until one runs\n", strings.Join(wr.Programs, ", "), how)
	fmt.Fprintf(w, "  requested      %s\n", rep.Requested)
	if rep.Reach != "" {
		fmt.Fprintf(w, "  request model  %s\n", rep.RequestModel)
		fmt.Fprintf(w, "  reaches        %s\n", rep.Reach)
		fmt.Fprintf(w, "  throttling     %s\n", rep.ThrottlingOptOut)
	} else {
		fmt.Fprintln(w, "  reaches        every CPU's idle-state choice, while one of the programs runs")
	}
	fmt.Fprintf(w, "watching until %s\n", rep.Until)
}

// WriteProgramEvent is apply --while's line for a program starting or
// exiting (or running when a failed take, tried again, succeeded), and
// what it did to the setting, with the time (to the
// millisecond) it was seen; the first hold's check follows it.
func WriteProgramEvent(w io.Writer, state WhileState, e *ProgramEvent) {
	what := e.Event
	if e.Event == EventRetried {
		what = "runs, tried again"
	}
	if e.NoticedAfterNs != nil {
		what += fmt.Sprintf(" %.2fs ago", time.Duration(*e.NoticedAfterNs).Seconds())
	}
	var did string
	switch {
	case e.Setting == SettingHeld:
		did = "holding"
		if g := e.Granted; g != nil && g.Resolution100ns != 0 {
			did += ", granted " + timerinfo.FormatPeriodMS(g.Resolution100ns) + " ms"
		} else if e.InForce != nil {
			did += ", " + inForceText(*e.InForce) + " in force"
		}
	case e.Setting == SettingReleased:
		did = "released"
		if e.InForce != nil {
			did += ", " + inForceText(*e.InForce) + " in force now"
		}
	case e.Setting == SettingFailed:
		did = "holding failed: " + printable.Message(e.Error)
	case state.Holding:
		did = "holding for " + timerstate.HoldingFor(state.Running)
	default:
		did = "nothing held"
	}
	fmt.Fprintf(w, "%s  %s (pid %d) %s: %s\n", e.Time.Format("15:04:05.000"), e.Program, e.PID, what, did)
	if c := e.Check; c != nil {
		fmt.Fprintf(w, "  check          %s 1 ms takes p50 %s ms, p99 %s ms now (%d waits, %s)\n", c.Method, holdMS(c.P50Ns), holdMS(c.P99Ns), c.Samples, c.Taken())
	}
}

// inForceText is a setting read back: a period, or a cpu_dma_latency.
func inForceText(s timerinfo.Setting) string {
	if s.Resolution100ns != 0 {
		return timerinfo.FormatPeriodMS(s.Resolution100ns) + " ms"
	}
	return s.String()
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// WriteRunStart is run's line on standard error about what it holds.
func WriteRunStart(w io.Writer, s RunStart) {
	if s.Windows == nil {
		fmt.Fprintf(w, "tickscope: running %s with %s (released when it exits)\n", s.Program, s.Granted)
		return
	}
	fmt.Fprintf(w, "tickscope: holding %s (granted %s ms) while %s runs; it reaches %s\n", s.Requested, timerinfo.FormatPeriodMS(s.Granted.Resolution100ns), s.Program, s.Windows.Reach())
}

// RunWarning is run's warning when its request does not reach the
// program, or "".
func RunWarning(s RunStart) string {
	if s.Windows == nil || s.Windows.RequestsGlobal() {
		return ""
	}
	return fmt.Sprintf("requests are per-process here, so %s keeps its own timer period: the request held by tickscope does not reach it (%s is %s; %s)",
		s.Program, timerinfo.GlobalRequestsKey, report.RegistryValue(s.Windows.GlobalTimerResolutionRequests), s.Windows.GlobalAdvice())
}
