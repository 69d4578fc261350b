package timerinfo

import "fmt"

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

// StillRaised names the timer setting in force although this process holds
// none (after a holder was ended): a Windows period finer than the coarsest,
// or a Linux cpu_dma_latency below the default. It is "" when nothing is
// raised or the report cannot tell.
func (r *Report) StillRaised() string {
	switch {
	case r.Windows != nil && r.Windows.Current100ns < r.Windows.Coarsest100ns:
		return fmt.Sprintf("the timer is still at %s ms, finer than the coarsest %s ms: another program holds a request",
			FormatPeriodMS(r.Windows.Current100ns), FormatPeriodMS(r.Windows.Coarsest100ns))
	case r.Linux != nil && r.Linux.CPUDMALatencyUs != nil && *r.Linux.CPUDMALatencyUs < DMALatencyDefaultUs:
		return fmt.Sprintf("cpu_dma_latency is still %d µs: another program holds a request", *r.Linux.CPUDMALatencyUs)
	}
	return ""
}
