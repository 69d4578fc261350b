package timerinfo

import (
	"fmt"
	"time"
)

// Where Windows keeps the value that makes timer requests global again
// (Windows 11 and Server 2022 on; Windows 10 client builds ignore it).
const (
	KernelKeyPath       = `SYSTEM\CurrentControlSet\Control\Session Manager\kernel`
	GlobalRequestsValue = "GlobalTimerResolutionRequests"
	// GlobalRequestsKey is the value's full name, as people type it.
	GlobalRequestsKey = `HKLM\` + KernelKeyPath + `\` + GlobalRequestsValue
)

// DMALatencyDefaultUs is the Linux kernel's default CPU latency request
// (PM_QOS_CPU_LATENCY_DEFAULT_VALUE, 2000 s): what /dev/cpu_dma_latency
// reads while nobody holds a request, and the largest value it takes.
const DMALatencyDefaultUs = 2_000_000_000

// RequestsGlobal reports whether a timer request made here speeds up every
// process's waits, not only the waits of the process that made it.
func (w *Windows) RequestsGlobal() bool {
	return w.RequestModel == RequestModelGlobalLegacy || w.RequestModel == RequestModelGlobalKey
}

// Reach says whom a timer request made on this Windows build reaches.
func (w *Windows) Reach() string {
	switch {
	case w.RequestsGlobal():
		return "every process: requests are global on this machine"
	case w.RequestModel == RequestModelKeyIgnored:
		return "tickscope itself only: requests are per-process, and this build ignores " + GlobalRequestsKey
	case w.RequestModel == RequestModelGlobalKeyPending:
		return "tickscope itself only until a reboot: " + GlobalRequestsValue + "=1 was set after this boot and the kernel reads it at boot (" + VerifyGlobalAdvice + ")"
	case w.RequestModel == RequestModelKeyRemovedPending:
		return "unknown until a reboot: " + GlobalRequestsKey + " was changed after this boot and the kernel reads it at boot (" + VerifyGlobalAdvice + ")"
	}
	return "tickscope itself only: requests are per-process on this build (" + w.GlobalAdvice() + ")"
}

// GlobalAdvice says whether requests can be made global on this build, and
// how.
func (w *Windows) GlobalAdvice() string {
	if w.Build >= Build20348 {
		return "`tickscope global on`, elevated, and a reboot make them global"
	}
	return "this build cannot make them global: Windows 10 client builds ignore " + GlobalRequestsValue
}

// SuggestedPeriod100ns is the period tickscope suggests before a bench has
// recommended one, 0.5 ms: what the dashboard's Hold offers, and what
// status's diagnosis runs.
const SuggestedPeriod100ns = 5000

// SuggestedPeriod is SuggestedPeriod100ns within the periods w offers.
func (w *Windows) SuggestedPeriod() uint32 {
	return min(max(uint32(SuggestedPeriod100ns), w.Finest100ns), max(w.Coarsest100ns, w.Finest100ns))
}

// VerifyGlobalAdvice points to the command that measures which request
// model is in force, whatever the registry says.
const VerifyGlobalAdvice = "`tickscope verify-global` measures which is in force now"

// bootGrace is how long after boot a write to the kernel key still counts
// as made at boot: the boot time is computed from the uptime, and writes
// made while Windows starts are read with the rest. A `global on|off` in
// the first two minutes after boot is missed (verify-global still tells).
const bootGrace = 2 * time.Minute

// WrittenAfterBoot reports whether a registry key last written at
// lastWrite (RegQueryInfoKey's lpftLastWriteTime) was written after the
// boot that began uptime before now (GetTickCount64, which counts sleep
// and hibernation, so a resume is not a boot, and a fast-startup "shut
// down", which hibernates the kernel, is not one either). A zero lastWrite
// (unreadable) is not after boot.
func WrittenAfterBoot(lastWrite, now time.Time, uptime time.Duration) bool {
	if lastWrite.IsZero() || uptime <= 0 {
		return false
	}
	return lastWrite.After(now.Add(-uptime).Add(bootGrace))
}

// PendingRebootWarning is query's warning while the kernel key was written
// after this boot, or "" when it was not.
func (w *Windows) PendingRebootWarning() string {
	switch w.RequestModel {
	case RequestModelGlobalKeyPending:
		return GlobalRequestsValue + " is set, but was written after this boot and takes effect after a reboot: until then requests stay per-process; " + VerifyGlobalAdvice
	case RequestModelKeyRemovedPending:
		return GlobalRequestsKey + " was changed after this boot (it is now " + keyText(w.GlobalTimerResolutionRequests) + "), which takes effect after a reboot: requests stay global until then if it was set at boot; " + VerifyGlobalAdvice
	}
	return ""
}

func keyText(v *uint32) string {
	if v == nil {
		return "absent"
	}
	return fmt.Sprint(*v)
}

// StillRaised names the timer setting still in force after the holder of
// removed was ended, although this process holds none: TickTune's rule, a
// Windows period at or finer than the one the holder held, or a Linux
// cpu_dma_latency at or below it. Another program's coarser request (a
// browser at 1 ms after a 0.5 ms holder) is no reason to warn. Where the
// holder's setting is unknown, Windows says nothing (most desktops have
// some program holding the timer) and Linux warns below the default (few
// programs hold cpu_dma_latency). It is "" when nothing is raised or the
// report cannot tell.
func (r *Report) StillRaised(removed Setting) string {
	switch {
	case r.Windows != nil && removed.Resolution100ns != 0 && r.Windows.Current100ns < r.Windows.Coarsest100ns &&
		PeriodInForce(r.Windows.Current100ns, removed.Resolution100ns):
		return fmt.Sprintf("the timer is still at %s ms, finer than the coarsest %s ms: another program holds a request",
			FormatPeriodMS(r.Windows.Current100ns), FormatPeriodMS(r.Windows.Coarsest100ns))
	case r.Linux != nil && r.Linux.CPUDMALatencyUs != nil:
		limit := int32(DMALatencyDefaultUs - 1)
		if removed.CPUDMALatencyUs != nil {
			limit = *removed.CPUDMALatencyUs
		}
		if *r.Linux.CPUDMALatencyUs <= limit {
			return fmt.Sprintf("cpu_dma_latency is still %d µs: another program holds a request", *r.Linux.CPUDMALatencyUs)
		}
	}
	return ""
}
