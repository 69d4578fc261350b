package hold

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/printable"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/timerstate"
	"github.com/tickscope/tickscope/internal/waitcheck"
)

// The hold commands' text: apply, run and status. Warnings are the command's to print (on standard error,
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

// WriteStatus is status.
func WriteStatus(w io.Writer, rep *StatusReport) {
	fmt.Fprintln(w, "this process, measured now")
	writeHoldCheck(w, "no request", rep.Self.Without)
	if rep.Self.With != nil {
		writeHoldCheck(w, rep.Self.WithSetting.String(), rep.Self.With)
	}
	fmt.Fprintln(w)
	report.WriteQuery(w, rep.Query)
	fmt.Fprintln(w)
	WriteStartup(w, rep.Startup)
	if rep.BootService != nil {
		fmt.Fprintln(w)
		WriteBootService(w, rep.BootService)
	}
	if rep.Diagnosis != nil {
		fmt.Fprintln(w)
		writeDiagnosis(w, rep.Diagnosis)
	}
}

// writeDiagnosis is the end of status: each reason and what to do.
func writeDiagnosis(w io.Writer, d *Diagnosis) {
	fmt.Fprintln(w, "diagnosis")
	if len(d.Reasons) == 0 {
		fmt.Fprintln(w, "  nothing found that keeps a wait from what the timer offers")
	}
	for _, r := range d.Reasons {
		fmt.Fprintf(w, "  - %s\n    do: %s\n", r.Says, r.Do)
	}
	fmt.Fprintf(w, "  holders: %s\n", d.Holders)
}

func writeHoldCheck(w io.Writer, label string, c *waitcheck.Check) {
	fmt.Fprintf(w, "  %-26s %s 1 ms takes p50 %s ms, p99 %s ms (%d waits)\n", label, c.Method, holdMS(c.P50Ns), holdMS(c.P99Ns), c.Samples)
}

// WriteStartup is status's block on the startup holder. What it read back
// (the definition's command line, the holder's log, the OS's error) is
// made printable: a task's definition may be another user's.
func WriteStartup(w io.Writer, s *StartupState) {
	fmt.Fprintln(w, "startup holder")
	if s == nil {
		fmt.Fprintln(w, "  none on this OS")
		return
	}
	fmt.Fprintf(w, "  %-14s %s\n", "mechanism", s.Mechanism)
	switch {
	case s.Error != "":
		fmt.Fprintf(w, "  %-14s unknown (%s)\n", "installed", printable.Message(s.Error))
	case !s.Installed:
		fmt.Fprintf(w, "  %-14s no\n", "installed")
	case !s.Ours:
		fmt.Fprintf(w, "  %-14s yes, but not by tickscope (left alone)\n", "installed")
	default:
		fmt.Fprintf(w, "  %-14s yes\n", "installed")
		fmt.Fprintf(w, "  %-14s %s\n", "holds", printable.Line(s.Holds))
		fmt.Fprintf(w, "  %-14s %s\n", "runs", printable.Line(s.Exe+" "+strings.Join(s.Args, " ")))
		if s.Stale {
			fmt.Fprintf(w, "  %-14s stale: it runs another executable than this tickscope's holder; run apply --persist again to update it\n", "path")
		}
	}
	held := ""
	if s.Running && s.Installed && s.Ours {
		held = ", the timer is not at what it holds"
		if s.InForce {
			held = ", the timer is at what it holds or finer"
		}
	}
	if len(s.While) > 0 && s.Installed && s.Ours {
		fmt.Fprintf(w, "  %-14s %s\n", "while", printable.Line(strings.Join(s.While, ", ")))
		switch {
		case !s.Running:
		case s.WhileSource == timerstate.SourceEvents:
			fmt.Fprintf(w, "  %-14s at each process start and exit the kernel announces, and every %v\n", "looks", timerstate.EventScanEvery)
		case s.WhileSource == timerstate.SourceScan:
			fmt.Fprintf(w, "  %-14s every %v\n", "looks", timerstate.ScanEvery)
		}
		switch {
		case !s.Running:
		case s.WhileError != "":
			held = " (" + printable.Message(s.WhileError) + ")"
		case len(s.HoldingFor) > 0:
			// What status's own scan sees, not what the holder holds.
			held = ", " + printable.Line(timerstate.HoldingFor(s.HoldingFor)) + " runs" + held
		default:
			held = ", none of " + printable.Line(strings.Join(s.While, ", ")) + " runs"
		}
	}
	switch {
	case s.Running && s.PID != 0:
		fmt.Fprintf(w, "  %-14s running (process %d)%s\n", "state", s.PID, held)
	case s.Running:
		fmt.Fprintf(w, "  %-14s running (process id unreadable)%s\n", "state", held)
	default:
		fmt.Fprintf(w, "  %-14s not running\n", "state")
	}
	if s.Log != "" {
		fmt.Fprintf(w, "  %-14s %s\n", "last logged", printable.Message(s.Log))
	}
}

// WriteBootService is status's block on the boot service, made printable
// as WriteStartup's: a service of that name may be another's.
func WriteBootService(w io.Writer, s *StartupState) {
	fmt.Fprintln(w, "boot service")
	fmt.Fprintf(w, "  %-14s %s\n", "mechanism", s.Mechanism)
	switch {
	case s.Error != "":
		fmt.Fprintf(w, "  %-14s unknown (%s)\n", "installed", printable.Message(s.Error))
		return
	case !s.Installed:
		fmt.Fprintf(w, "  %-14s no\n", "installed")
		return
	case !s.Ours:
		fmt.Fprintf(w, "  %-14s yes, but not by tickscope (left alone)\n", "installed")
	default:
		fmt.Fprintf(w, "  %-14s yes\n", "installed")
		fmt.Fprintf(w, "  %-14s %s\n", "holds", printable.Line(s.Holds))
		fmt.Fprintf(w, "  %-14s %s\n", "runs", printable.Line(s.Exe+" "+strings.Join(s.Args, " ")))
		fmt.Fprintf(w, "  %-14s %s\n", "as", printable.Line(s.Account))
		if s.Stale {
			fmt.Fprintf(w, "  %-14s stale: it runs another executable than this tickscope; run apply --persist --boot again to update it\n", "path")
		}
	}
	state := s.State
	switch {
	case s.PID != 0:
		state += fmt.Sprintf(" (process %d)", s.PID)
	case s.Exit != "" && s.Ours:
		state += " (" + s.Exit + "; the Application event log, source " + persist.ServiceName + ", says why)"
	case s.Exit != "":
		state += " (" + s.Exit + ")"
	}
	if s.State == "running" && s.Ours {
		if s.InForce {
			state += ", the timer is at what it holds or finer"
		} else {
			state += ", the timer is not at what it holds"
		}
	}
	fmt.Fprintf(w, "  %-14s %s\n", "state", state)
}
