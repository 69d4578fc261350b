package inspect

import (
	"fmt"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/who"
)

// Reason is one reason why a wait takes what it takes here, from data,
// with what to do about it as a command.
type Reason struct {
	// Code names the reason for programs: one of the Reason* constants.
	Code string `json:"code"`
	Says string `json:"says"`
	Do   string `json:"do"`
}

// The reasons status can give.
const (
	ReasonPerProcess      = "per-process-requests"
	ReasonKeyIgnored      = "global-key-ignored"
	ReasonKeyPending      = "global-key-pending-reboot"
	ReasonThrottled       = "hidden-process-throttled"
	ReasonFinerHolder     = "another-process-holds-finer"
	ReasonDynamicTickOff  = "dynamic-tick-disabled"
	ReasonPlatformClock   = "platform-clock-forced"
	ReasonDefaultSlack    = "default-timer-slack"
	ReasonDMALatencyHeld  = "cpu-dma-latency-held"
	ReasonRealTimeThreads = "realtime-threads"
)

// Diagnosis is the end of status: why the waits here take what they take.
type Diagnosis struct {
	Reasons []Reason `json:"reasons"`
	// Holders says whether who could name the holders, or why not.
	Holders string `json:"holders"`
}

// DiagnosisInput is what the diagnosis is made from: status's query and
// checks, the throttling opt-out's outcome while this process held its
// request, and who holds what (nil when it could not be read, with why).
type DiagnosisInput struct {
	Query      *timerinfo.Report
	Self       SelfCheck
	Throttling string
	Holders    *who.Snapshot
	HoldersErr error
}

// usefulGain is how much better a 1 ms wait's p50 must be with this
// process's own request than without for the default to count as costing
// something: less than that is within a quick check's noise.
const usefulGain = 10 * time.Microsecond

// Diagnose gives the reasons that apply, each from the data in in. It is
// pure.
func Diagnose(in DiagnosisInput) *Diagnosis {
	d := &Diagnosis{Reasons: []Reason{}, Holders: "read"}
	switch {
	case in.HoldersErr != nil:
		d.Holders = "not read: " + in.HoldersErr.Error()
	case in.Holders == nil:
		d.Holders = "not read"
	}
	if w := in.Query.Windows; w != nil {
		if in.Holders == nil && in.HoldersErr == nil && !w.Elevated {
			d.Holders = "not read: " + who.NeedsElevation
		}
		d.Reasons = diagnoseWindows(w, in)
	}
	if l := in.Query.Linux; l != nil {
		d.Reasons = diagnoseLinux(l, in)
	}
	return d
}

func diagnoseWindows(w *timerinfo.Windows, in DiagnosisInput) []Reason {
	reasons := []Reason{}
	add := func(code, says, do string) { reasons = append(reasons, Reason{code, says, do}) }
	run := fmt.Sprintf("tickscope run --resolution %d -- PROGRAM", w.SuggestedPeriod())
	switch w.RequestModel {
	case timerinfo.RequestModelPerProcess:
		if w.Build >= timerinfo.Build20348 {
			add(ReasonPerProcess, "timer requests are per-process and GlobalTimerResolutionRequests is not set: a period one program holds does not shorten another program's waits, and a program that asks for none keeps 15.6 ms waits",
				"tickscope global on (elevated), then restart Windows")
		} else {
			add(ReasonPerProcess, "timer requests are per-process on this build (Windows 10 2004 or later, which has no global switch): a period one program holds does not shorten another program's waits",
				run)
		}
	case timerinfo.RequestModelKeyIgnored:
		add(ReasonKeyIgnored, "GlobalTimerResolutionRequests is set, but Windows 10 builds never read it: requests stay per-process", run)
	case timerinfo.RequestModelGlobalKeyPending, timerinfo.RequestModelKeyRemovedPending:
		add(ReasonKeyPending, "GlobalTimerResolutionRequests was changed after this boot and the kernel reads it at boot: it is not in force until a reboot",
			"shutdown /r /t 0 (then tickscope verify-global)")
	}
	if w.Build >= timerinfo.Build22000 && in.Self.With != nil && in.Throttling != "" && in.Throttling != timerinfo.ThrottlingOptedOut {
		add(ReasonThrottled, "Windows 11 ignores the timer request of a process whose windows are all minimised or hidden unless it opts out, and this process's opt-out failed ("+in.Throttling+")",
			"keep the window of the program that holds the timer visible while it holds (tickscope apply opts out itself)")
	}
	if reason, ok := finerHolderWindows(w, in); ok {
		reasons = append(reasons, reason)
	}
	if w.DynamicTickDisabled == "yes" {
		add(ReasonDynamicTickOff, "disabledynamictick is set in the boot configuration: a debugging switch that keeps the tick running when idle (power) and changes what waits take",
			"bcdedit /deletevalue disabledynamictick (elevated), then restart Windows")
	}
	if w.PlatformClock == "yes" {
		add(ReasonPlatformClock, "useplatformclock is set in the boot configuration: QueryPerformanceCounter reads the platform timer (HPET or the ACPI PM timer), slower to read than the TSC",
			"bcdedit /deletevalue useplatformclock (elevated), then restart Windows")
	}
	return reasons
}

// finerHolderWindows: the timer runs finer than the coarsest period while
// this process holds nothing, so another process holds it (named when who
// could read the holders).
func finerHolderWindows(w *timerinfo.Windows, in DiagnosisInput) (Reason, bool) {
	if w.ProcessHoldsRequest || w.Current100ns >= w.Coarsest100ns {
		return Reason{}, false
	}
	says := fmt.Sprintf("another process holds the timer at %s ms", timerinfo.FormatPeriodMS(w.Current100ns))
	do := "tickscope who (elevated) names it"
	if in.Holders != nil && in.Holders.Windows != nil {
		var named []string
		var finest *who.Holder
		for i, h := range in.Holders.Windows.Holders {
			if h.Self {
				continue
			}
			if h.Period100ns <= w.Current100ns+w.Current100ns/100 {
				named = append(named, fmt.Sprintf("%s (process %d, %s ms)", who.Base(h.Image), h.PID, timerinfo.FormatPeriodMS(h.Period100ns)))
			}
			if finest == nil || h.Period100ns < finest.Period100ns {
				finest = &in.Holders.Windows.Holders[i]
			}
		}
		if len(named) > 0 {
			says = "the timer runs at " + timerinfo.FormatPeriodMS(w.Current100ns) + " ms because " + strings.Join(named, ", ") + " holds it"
		}
		if finest != nil {
			do = fmt.Sprintf("close %s, or measure while it runs: tickscope who --watch 60s (elevated) shows when it holds what", who.Base(finest.Image))
		}
	}
	return Reason{ReasonFinerHolder, says + ": a sweep, or a request of yours coarser than that, changes nothing the timer does, and on builds with global requests every process waits on that period", do}, true
}

func diagnoseLinux(l *timerinfo.Linux, in DiagnosisInput) []Reason {
	reasons := []Reason{}
	add := func(code, says, do string) { reasons = append(reasons, Reason{code, says, do}) }
	if without, with := in.Self.Without, in.Self.With; l.TimerSlackNs == who.DefaultSlackNs && without != nil && with != nil && without.P50Ns-with.P50Ns >= int64(usefulGain) {
		add(ReasonDefaultSlack, fmt.Sprintf("threads get the default 50 µs timer slack: a 1 ms wait took p50 %s ms here, and %s ms with 1 ns of slack", msText(without.P50Ns), msText(with.P50Ns)),
			"tickscope run --slack 1us -- PROGRAM")
	}
	if us := l.CPUDMALatencyUs; us != nil && *us < timerinfo.DMALatencyDefaultUs {
		says := fmt.Sprintf("/dev/cpu_dma_latency is held at %d µs: the CPUs stay out of idle states slower to leave than that, which shortens wake-ups and costs power", *us)
		do := "sudo tickscope who names the process that holds it"
		if in.Holders != nil && in.Holders.Linux != nil && len(in.Holders.Linux.DMALatencyHolders) > 0 {
			var named []string
			for _, p := range in.Holders.Linux.DMALatencyHolders {
				named = append(named, fmt.Sprintf("%s (process %d)", p.Name, p.PID))
			}
			says += ", by " + strings.Join(named, ", ")
			first := in.Holders.Linux.DMALatencyHolders[0]
			do = fmt.Sprintf("kill %d to release it (the kernel drops the request when %s exits)", first.PID, first.Name)
		}
		add(ReasonDMALatencyHeld, says, do)
	}
	if in.Holders != nil && in.Holders.Linux != nil && len(in.Holders.Linux.RealTime) > 0 {
		rt := in.Holders.Linux.RealTime
		var named []string
		for _, t := range rt[:min(len(rt), 3)] {
			named = append(named, fmt.Sprintf("%s (thread %d, %s %d)", t.Name, t.TID, t.Policy, t.Priority))
		}
		if len(rt) > 3 {
			named = append(named, fmt.Sprintf("and %d more", len(rt)-3))
		}
		add(ReasonRealTimeThreads, fmt.Sprintf("%d thread(s) of user processes run SCHED_FIFO or SCHED_RR: %s; they ignore timer slack and run before every normal thread, measurements included", len(rt), strings.Join(named, ", ")),
			fmt.Sprintf("chrt --other -p 0 %d puts the first back to normal scheduling", rt[0].TID))
	}
	return reasons
}

// msText is a duration in ns as ms with 4 decimals, as status prints its
// checks.
func msText(ns int64) string { return fmt.Sprintf("%.4f", float64(ns)/1e6) }
