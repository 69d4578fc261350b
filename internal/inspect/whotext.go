package inspect

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/printable"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/who"
)

// WhoText shows `tickscope who` as text as it goes: who holds the timer
// and what could not be read, then with --watch each change as it comes
// (a WhoShow). WriteWhoSummary ends it.
type WhoText struct {
	W       io.Writer
	changes int
}

// Read writes the holders as first read.
func (t *WhoText) Read(rep *WhoReport) {
	if win := rep.Windows; win != nil {
		writeWhoWindows(t.W, win)
	}
	if l := rep.Linux; l != nil {
		writeWhoLinux(t.W, l, rep.Elevated)
	}
	if rep.WatchNote != "" {
		fmt.Fprintln(t.W, rep.WatchNote)
	}
}

// Changed writes one line of --watch, as the change happens.
func (t *WhoText) Changed(c who.Change) {
	if t.changes++; t.changes == 1 {
		fmt.Fprintln(t.W)
	}
	verb := "ended: "
	if c.Started {
		verb = "began: "
	}
	fmt.Fprintf(t.W, "%s  %s%s\n", c.At.Local().Format("15:04:05.000"), verb, report.HoldText(c.Hold))
}

// WriteWhoSummary is the end of who's text: with --watch, how long each
// thing was held while watched; nothing otherwise.
func WriteWhoSummary(w io.Writer, rep *WhoReport) {
	if rep.Watch != nil {
		writeWhoWatchSummary(w, rep.Watch)
	}
}

func writeWhoWindows(w io.Writer, win *WhoWindows) {
	fmt.Fprintln(w, "timer")
	fmt.Fprintf(w, "  %-14s %s\n", "current", report.Period(win.Current100ns))
	fmt.Fprintf(w, "  %-14s %s\n", "finest", report.Period(win.Finest100ns))
	fmt.Fprintf(w, "  %-14s %s\n", "coarsest", report.Period(win.Coarsest100ns))
	fmt.Fprintf(w, "  %-14s %s\n", "tickscope", "holds a request: "+report.YesNo(win.ProcessHoldsRequest))
	if r := win.Rundown; r != nil && r.KernelRequests > 0 {
		fmt.Fprintf(w, "  %-14s %d request(s), finest %s\n", "the kernel", r.KernelRequests, report.Period(r.KernelRequested100ns))
	}
	if win.NeedsElevation != "" {
		if t := win.InterruptTick; t != nil {
			fmt.Fprintf(w, "  %-14s %s\n", "interrupt now", interruptTickText(t))
		}
		if c := win.Sleep1; c != nil {
			writeHoldCheck(w, "here now, no request", c)
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "holders: unknown: "+win.NeedsElevation)
		return
	}
	fmt.Fprintln(w)
	switch {
	case len(win.Holders) == 0 && win.HoldersIncomplete:
		fmt.Fprintln(w, "holders: unknown: stopped before the Kernel-Power rundown named any")
		return
	case len(win.Holders) == 0:
		fmt.Fprintln(w, "holders: no process holds a timer request")
		return
	case win.HoldersIncomplete:
		fmt.Fprintln(w, "holders, finest first (partial: stopped before the rundown ended, there may be more)")
	default:
		fmt.Fprintln(w, "holders, finest first")
	}
	fmt.Fprintf(w, "  %-10s %-8s %s\n", "period ms", "pid", "image")
	for _, h := range win.Holders {
		self := ""
		if h.Self {
			self = "  (tickscope)"
		}
		fmt.Fprintf(w, "  %-10s %-8d %s%s\n", timerinfo.FormatPeriodMS(h.Period100ns), h.PID, printable.Line(h.Image), self)
	}
}

// interruptTickText says the interrupt period measured from the interrupt
// time's steps, and how.
func interruptTickText(t *timerinfo.InterruptTick) string {
	steps := 0
	for _, s := range t.Steps {
		steps += s.Count
	}
	switch {
	case t.Quantised:
		return fmt.Sprintf("%s: the step of the interrupt time (%s, %d steps)", report.Period(t.Period100ns), t.Source, steps)
	case steps == 0:
		return fmt.Sprintf("unknown: the interrupt time did not step (%s)", t.Source)
	}
	return fmt.Sprintf("unknown: no regular steps seen: this system's interrupt time is not tick-quantised (%s, changed at %d of %d reads, by %d different amounts)", t.Source, steps, t.Reads, len(t.Steps))
}

func writeWhoLinux(w io.Writer, l *who.Linux, root bool) {
	fmt.Fprintln(w, "/dev/cpu_dma_latency")
	if l.CPUDMALatencyUs != nil {
		fmt.Fprintf(w, "  %-14s %s\n", "in force", report.DMAValue(*l.CPUDMALatencyUs))
	} else {
		fmt.Fprintf(w, "  %-14s unknown\n", "in force")
	}
	if len(l.DMALatencyHolders) == 0 {
		fmt.Fprintf(w, "  %-14s none seen\n", "held by")
	}
	for _, p := range l.DMALatencyHolders {
		fmt.Fprintf(w, "  %-14s process %d %s%s\n", "held by", p.PID, printable.Line(p.Name), selfMark(p.Self))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "timer slack other than the default %v\n", time.Duration(l.DefaultSlackNs))
	if len(l.Slack) == 0 {
		fmt.Fprintln(w, "  none seen")
	}
	for _, t := range l.Slack {
		fmt.Fprintf(w, "  %-12v process %d thread %d %s\n", time.Duration(t.SlackNs), t.PID, t.TID, printable.Line(t.Name))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "real-time threads (SCHED_FIFO, SCHED_RR: their slack is ignored)")
	if len(l.RealTime) == 0 {
		fmt.Fprintln(w, "  none seen in user processes")
	}
	for _, t := range l.RealTime {
		fmt.Fprintf(w, "  %-12s process %d thread %d %s, priority %d\n", t.Policy, t.PID, t.TID, printable.Line(t.Name), t.Priority)
	}
	if l.RealTimeKernelThreads > 0 {
		fmt.Fprintf(w, "  and %d of the kernel's own threads (migration, watchdog...)\n", l.RealTimeKernelThreads)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "cpuidle states disabled")
	if len(l.IdleDisabled) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, s := range l.IdleDisabled {
		fmt.Fprintf(w, "  %-12s %s on CPUs %s\n", printable.Line(s.State), printable.Line(s.Name), timerinfo.FormatCPUList(s.CPUs))
	}
	if len(l.Unreadable) > 0 {
		fmt.Fprintln(w)
		how := ""
		if !root {
			how = " (not root)"
		}
		fmt.Fprintf(w, "could not read%s\n", how)
		for _, u := range l.Unreadable {
			fmt.Fprintf(w, "  %s: %s\n", printable.Line(u.What), printable.Message(u.Why))
		}
	}
}

func selfMark(self bool) string {
	if self {
		return " (tickscope)"
	}
	return ""
}

// heldRounding is the one rounding of --watch's summary: the time watched
// and each time held, so that no row shows more than the whole.
const heldRounding = time.Millisecond

func writeWhoWatchSummary(w io.Writer, s *who.Summary) {
	fmt.Fprintln(w)
	fmt.Fprintf(w, "while watched (%v)\n", time.Duration(s.WatchedNs).Round(heldRounding))
	if len(s.Held) == 0 {
		fmt.Fprintln(w, "  nothing was held")
	}
	for _, h := range s.Held {
		var notes []string
		if h.AtStart {
			notes = append(notes, "already at the start")
		}
		if h.AtEnd {
			notes = append(notes, "still at the end")
		}
		note := ""
		if len(notes) > 0 {
			note = " (" + strings.Join(notes, ", ") + ")"
		}
		fmt.Fprintf(w, "  %-10v %s%s\n", time.Duration(h.HeldNs).Round(heldRounding), report.HoldText(h.Hold), note)
	}
}
