package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/timerinfo"
)

// WriteQuery renders what `tickscope query` found, for people.
func WriteQuery(w io.Writer, r *timerinfo.Report) {
	p := newPrinter(w, "")
	p.line(fmt.Sprintf("tickscope query: %s/%s, %d CPUs", r.OS, r.Arch, r.CPUs))
	p.line("")
	switch {
	case r.Windows != nil:
		writeWindows(p, r.Windows)
	case r.Linux != nil:
		writeLinux(p, r.Linux)
	case r.Other != nil:
		p.kv("kernel", r.Other.KernelRelease)
		p.kv("unsupported", r.Other.Unsupported)
	}
	for _, warning := range r.Warnings {
		p.line("")
		p.line("warning: " + warning)
	}
}

// Period is a Windows timer period in ms and in 100 ns units.
func Period(v uint32) string {
	return fmt.Sprintf("%s ms (%d x 100ns)", timerinfo.FormatPeriodMS(v), v)
}

// RegistryValue renders a registry DWORD, or "absent".
func RegistryValue(v *uint32) string {
	if v == nil {
		return "absent"
	}
	return fmt.Sprint(*v)
}

// YesNo is b as the text says it.
func YesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func writeWindows(p *printer, win *timerinfo.Windows) {
	p.kv("coarsest", Period(win.Coarsest100ns))
	p.kv("finest", Period(win.Finest100ns))
	p.kv("current", Period(win.Current100ns))
	p.kv("this process", "holds a request: "+YesNo(win.ProcessHoldsRequest))
	kind := "workstation"
	if win.Server {
		kind = "server"
	}
	p.kv("windows", fmt.Sprintf("%s (build %d, %s)", win.Version, win.Build, kind))
	p.kv("request model", fmt.Sprintf("%s (this is %s)", win.RequestModel, win.Product))
	key := "GlobalTimerResolutionRequests " + RegistryValue(win.GlobalTimerResolutionRequests)
	if win.PendingRebootWarning() != "" {
		// Only on builds that read the key: elsewhere no reboot changes it.
		key += " (written after this boot: takes effect after a reboot)"
	}
	p.kv("global key", key)
	p.kv("elevated", YesNo(win.Elevated))
	p.kv("dynamic tick", "disabledynamictick "+win.DynamicTickDisabled)
	p.kv("platform tick", "useplatformtick "+win.PlatformTick)
	p.kv("platform clock", "useplatformclock "+win.PlatformClock)
	p.kv("user presence", "DisableUserPresenceQos "+RegistryValue(win.DisableUserPresenceQos))
	p.kv("QPC frequency", fmt.Sprintf("%d Hz", win.QPCFrequencyHz))
	if win.NoHighResolutionTimers {
		p.kv("hr timers", "none (before Windows 10 1803): periods are held in whole milliseconds")
	}
}

func writeLinux(p *printer, l *timerinfo.Linux) {
	p.kv("kernel", l.KernelRelease+" "+l.KernelVersion)
	p.kv("preemption", l.Preemption)
	tick := "unknown"
	if l.HZ > 0 {
		tick = fmt.Sprintf("%d (tick %v, from CLOCK_MONOTONIC_COARSE)", l.HZ, time.Second/time.Duration(l.HZ))
	}
	p.kv("HZ", tick)
	p.kv("high-res timers", l.HighResTimers)
	noHZ := l.NoHZ
	if l.KernelConfigSource != "" {
		noHZ += " (" + l.KernelConfigSource + ")"
	} else {
		noHZ += " (kernel config not readable)"
	}
	p.kv("NO_HZ", noHZ)
	p.kv("clocksource", fmt.Sprintf("%s (available: %s)", orUnknown(l.Clocksource), strings.Join(l.AvailableClocksource, ", ")))
	p.kv("timer slack", time.Duration(l.TimerSlackNs).String()+" (this thread)")
	if l.CPUDMALatencyUs != nil {
		p.kv("cpu_dma_latency", DMALatency(*l.CPUDMALatencyUs))
	} else {
		p.kv("cpu_dma_latency", "unknown ("+l.CPUDMALatencyErr+")")
	}
	p.kv("cpuidle", fmt.Sprintf("driver %s, governor %s", orUnknown(l.CPUIdleDriver), orUnknown(l.CPUIdleGovernor)))
	for _, s := range l.CPUIdleStates {
		state := fmt.Sprintf("%-10s exit latency %4d µs  %s", s.Name, s.ExitLatencyUs, s.Description)
		if s.Disabled {
			state += " (disabled)"
		}
		p.kv("", state)
	}
	p.kv("privileges", fmt.Sprintf("root %s, CAP_SYS_NICE %s", YesNo(l.Root), YesNo(l.CapSysNice)))
	p.kv("CPUs online", fmt.Sprint(l.CPUsOnline))
}

// DMALatency renders the PM-QoS aggregate; the kernel's "no constraint"
// default is 2000 s.
func DMALatency(us int32) string {
	if us >= timerinfo.DMALatencyDefaultUs {
		return fmt.Sprintf("%d µs (no request held)", us)
	}
	return fmt.Sprintf("%d µs (held by some process)", us)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
