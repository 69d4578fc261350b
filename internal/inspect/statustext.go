package inspect

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/printable"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/timerstate"
	"github.com/tickscope/tickscope/internal/waitcheck"
)

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
	fmt.Fprintf(w, "  %-26s %s 1 ms takes p50 %s ms, p99 %s ms (%d waits)\n", label, c.Method, ms(c.P50Ns), ms(c.P99Ns), c.Samples)
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

// ms is a duration in ms with 4 decimals, as status prints its checks (and
// the hold commands theirs).
func ms(ns int64) string { return strconv.FormatFloat(float64(ns)/1e6, 'f', 4, 64) }
