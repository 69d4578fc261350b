// Package timerinfo describes, as plain data, what an operating system
// reports about its timers (Report), a timer setting that was requested or
// granted (Setting) and the conditions a measurement ran under (Conditions).
//
// It does no I/O: the platform package fills these values in, the raw-samples
// file stores them, and the report package renders them. The JSON field names
// are part of tickscope's stable output (docs/json.md).
package timerinfo

import (
	"fmt"
	"strconv"
	"time"
)

// Report is what `tickscope query` prints. Exactly one of Windows, Linux and
// Other is set, matching OS.
type Report struct {
	OS       string   `json:"os"`   // GOOS
	Arch     string   `json:"arch"` // GOARCH
	CPUs     int      `json:"cpus"` // CPUs this process may run on
	Windows  *Windows `json:"windows,omitempty"`
	Linux    *Linux   `json:"linux,omitempty"`
	Other    *Other   `json:"other,omitempty"`
	Warnings []string `json:"warnings"`
}

// Windows is what Windows reports about its timer.
type Windows struct {
	// Periods in 100 ns units, as NtQueryTimerResolution returns them. The
	// call names its outputs MaximumResolution, MinimumResolution and
	// CurrentResolution: the "maximum resolution" is the coarsest period.
	Coarsest100ns uint32 `json:"coarsest_100ns"`
	Finest100ns   uint32 `json:"finest_100ns"`
	Current100ns  uint32 `json:"current_100ns"`
	// ProcessHoldsRequest is true when tickscope itself holds a request at the
	// time of the query (query makes none, so it is false there unless the Go
	// runtime made one: it does on builds without high-resolution timers).
	ProcessHoldsRequest bool   `json:"process_holds_request"`
	Version             string `json:"version"` // "10.0.26100", from RtlGetVersion
	Build               uint32 `json:"build"`
	Server              bool   `json:"server"`  // a Server product type
	Product             string `json:"product"` // "Windows 11 24H2": see WindowsProduct
	// RequestModel is one of the RequestModel* constants.
	RequestModel string `json:"request_model"`
	// GlobalTimerResolutionRequests is the registry value, or nil when absent.
	GlobalTimerResolutionRequests *uint32 `json:"global_timer_resolution_requests"`
	// KernelKeyWrittenAfterBoot is true when the key that holds
	// GlobalTimerResolutionRequests was written after this boot: the kernel
	// read the value at boot, so the value shown may not be in force yet.
	KernelKeyWrittenAfterBoot bool `json:"kernel_key_written_after_boot"`
	// NoHighResolutionTimers is true on builds without
	// CREATE_WAITABLE_TIMER_HIGH_RESOLUTION (before Windows 10 1803), where
	// the Go runtime calls timeBeginPeriod/timeEndPeriod itself and
	// tickscope holds only whole milliseconds. (Named for the exception, so
	// that a report that does not know, such as the model's, says nothing.)
	NoHighResolutionTimers bool `json:"no_high_resolution_timers"`
	Elevated               bool `json:"elevated"`
	// Boot settings read from `bcdedit /enum {current}`. Each is "yes", "no",
	// "default" (not set), or "unknown (...)" saying why it could not be read.
	DynamicTickDisabled string `json:"disabledynamictick"`
	PlatformTick        string `json:"useplatformtick"`
	PlatformClock       string `json:"useplatformclock"`
	// DisableUserPresenceQos is the registry value, or nil when absent.
	DisableUserPresenceQos *uint32 `json:"disable_user_presence_qos"`
	QPCFrequencyHz         int64   `json:"qpc_frequency_hz"`
}

// The request models a Windows build can be in.
const (
	RequestModelGlobalLegacy = "global: before Windows 10 2004"
	RequestModelPerProcess   = "per-process: Windows 10 2004+"
	RequestModelGlobalKey    = "global: GlobalTimerResolutionRequests=1 on Windows 11 / Server 2022+"
	RequestModelKeyIgnored   = "per-process: GlobalTimerResolutionRequests is set but this build ignores it"
	// The key was written after this boot and the kernel reads it at boot:
	// the value is set (or gone) but the running boot may still follow the
	// value it read at boot.
	RequestModelGlobalKeyPending  = "per-process until a reboot: GlobalTimerResolutionRequests=1 was set after this boot, and takes effect after a reboot"
	RequestModelKeyRemovedPending = "global until a reboot, if it was set at boot: GlobalTimerResolutionRequests was removed or changed after this boot, which takes effect after a reboot"
)

// Windows builds where the timer-request rules changed.
const (
	// Build19041 is Windows 10 2004, from which requests are per-process.
	Build19041 = 19041
	// Build20348 is Windows Server 2022, the first build whose kernel reads
	// GlobalTimerResolutionRequests (Windows 11 is 22000).
	Build20348 = 20348
	// Build22000 is Windows 11 21H2, the first whose kernel ignores the
	// timer request of a process whose windows are all minimised or hidden
	// unless it opts out (Microsoft's timeBeginPeriod documentation).
	Build22000 = 22000
)

// RunningRequestModel is RequestModelFor for the running boot: the kernel
// reads GlobalTimerResolutionRequests once, at boot (TickTune's README;
// valleyofdoom's PC-Tuning research), so on a build that honours it a value written after
// this boot is not in force yet, and a value removed after it may still
// be. writtenAfterBoot is KernelKeyWrittenAfterBoot.
func RunningRequestModel(build uint32, globalKey *uint32, writtenAfterBoot bool) string {
	model := RequestModelFor(build, globalKey)
	if !writtenAfterBoot || build < Build20348 {
		return model
	}
	if model == RequestModelGlobalKey {
		return RequestModelGlobalKeyPending
	}
	return RequestModelKeyRemovedPending
}

// RequestModelFor says which request model applies to a Windows build with
// the given GlobalTimerResolutionRequests value (nil when absent), as the
// kernel reads it at boot.
func RequestModelFor(build uint32, globalKey *uint32) string {
	keySet := globalKey != nil && *globalKey != 0
	switch {
	case build < Build19041:
		return RequestModelGlobalLegacy
	case keySet && build >= Build20348:
		return RequestModelGlobalKey
	case keySet:
		return RequestModelKeyIgnored
	default:
		return RequestModelPerProcess
	}
}

// Linux is what Linux reports about its timers.
type Linux struct {
	KernelRelease string `json:"kernel_release"`
	KernelVersion string `json:"kernel_version"` // uname -v
	Preemption    string `json:"preemption"`     // e.g. "PREEMPT_DYNAMIC", or "unknown"
	// HZ is 1 s divided by CLOCK_MONOTONIC_COARSE's resolution (the tick).
	HZ int64 `json:"hz"`
	// HighResTimers is "yes" when CLOCK_MONOTONIC resolves 1 ns, which the
	// kernel reports only while high-resolution timers are active.
	HighResTimers string `json:"high_res_timers"`
	// NoHZ is "idle", "full" or "periodic" from the kernel config, or "unknown".
	NoHZ                 string   `json:"no_hz"`
	KernelConfigSource   string   `json:"kernel_config_source"` // the file read, or ""
	Clocksource          string   `json:"clocksource"`
	AvailableClocksource []string `json:"available_clocksources"`
	// TimerSlackNs is the querying thread's timer slack.
	TimerSlackNs int64 `json:"timer_slack_ns"`
	// CPUDMALatencyUs is the aggregate /dev/cpu_dma_latency value, or nil
	// when it could not be read (it needs root).
	CPUDMALatencyUs  *int32         `json:"cpu_dma_latency_us"`
	CPUDMALatencyErr string         `json:"cpu_dma_latency_error,omitempty"`
	CPUIdleDriver    string         `json:"cpuidle_driver"`
	CPUIdleGovernor  string         `json:"cpuidle_governor"`
	CPUIdleStates    []CPUIdleState `json:"cpuidle_states"`
	Root             bool           `json:"root"`
	CapSysNice       bool           `json:"cap_sys_nice"`
	CPUsOnline       int            `json:"cpus_online"`
}

// CPUIdleState is one of cpu0's idle states.
type CPUIdleState struct {
	Name          string `json:"name"`
	Description   string `json:"description"`
	ExitLatencyUs int64  `json:"exit_latency_us"`
	Disabled      bool   `json:"disabled"`
}

// Other is what tickscope can say on an OS it has no timer backend for.
type Other struct {
	KernelRelease string `json:"kernel_release"`
	// Unsupported says plainly what cannot be queried or set here.
	Unsupported string `json:"unsupported"`
}

// Setting is a timer setting: what a measurement asked for, or what the OS
// granted. The zero value is "no request".
type Setting struct {
	// Resolution100ns is a Windows timer period in 100 ns units (0: none),
	// requested with NtSetTimerResolution.
	Resolution100ns uint32 `json:"resolution_100ns,omitempty"`
	// TimeBeginPeriodMs is a Windows timeBeginPeriod request in whole ms.
	TimeBeginPeriodMs uint32 `json:"time_begin_period_ms,omitempty"`
	// SlackNs is a Linux thread's timer slack in ns (0: left as it was).
	SlackNs int64 `json:"slack_ns,omitempty"`
	// CPUDMALatencyUs is a Linux /dev/cpu_dma_latency request held while
	// measuring, in µs (nil: none).
	CPUDMALatencyUs *int32 `json:"cpu_dma_latency_us,omitempty"`
	// Simulated marks a setting applied to the model of Windows timers.
	Simulated bool `json:"simulated,omitempty"`
}

// IsZero reports whether the setting asks for nothing.
func (s Setting) IsZero() bool {
	return s.Resolution100ns == 0 && s.TimeBeginPeriodMs == 0 && s.SlackNs == 0 && s.CPUDMALatencyUs == nil
}

// String renders the setting for people: "0.5000 ms (5000 x 100ns)",
// "slack 1ns" or "none".
func (s Setting) String() string {
	switch {
	case s.TimeBeginPeriodMs != 0:
		return fmt.Sprintf("timeBeginPeriod(%d)", s.TimeBeginPeriodMs)
	case s.Resolution100ns != 0:
		return fmt.Sprintf("%s ms (%d x 100ns)", FormatPeriodMS(s.Resolution100ns), s.Resolution100ns)
	case s.SlackNs != 0 && s.CPUDMALatencyUs != nil:
		return fmt.Sprintf("slack %v, cpu_dma_latency %d µs", time.Duration(s.SlackNs), *s.CPUDMALatencyUs)
	case s.SlackNs != 0:
		return "slack " + time.Duration(s.SlackNs).String()
	case s.CPUDMALatencyUs != nil:
		return fmt.Sprintf("cpu_dma_latency %d µs", *s.CPUDMALatencyUs)
	default:
		return "none"
	}
}

// FormatPeriodMS renders a period in 100 ns units as milliseconds with the
// four decimals that make every 100 ns step visible.
func FormatPeriodMS(period100ns uint32) string {
	return strconv.FormatFloat(float64(period100ns)/10000, 'f', 4, 64)
}

// Conditions records what a measurement ran under.
type Conditions struct {
	// CurrentBefore100ns and CurrentAfter100ns are the Windows timer period
	// before the request was made and after it was released (0 elsewhere).
	CurrentBefore100ns uint32 `json:"current_before_100ns,omitempty"`
	CurrentAfter100ns  uint32 `json:"current_after_100ns,omitempty"`
	// TimerSlackNs is the measuring thread's slack while it measured (Linux).
	TimerSlackNs int64 `json:"timer_slack_ns,omitempty"`
	// Priority says how the measuring thread was scheduled.
	Priority string `json:"priority"`
	// CPUNs and WallNs are the process's CPU time and the wall time over
	// the measurement: what the wait method cost.
	CPUNs  int64 `json:"cpu_ns,omitempty"`
	WallNs int64 `json:"wall_ns,omitempty"`
	// TimerThrottling is the outcome of the Windows 11 opt-out from
	// timer-resolution throttling made before a period was held
	// (ThrottlingOptedOut, or "unavailable: ..." where the build has no
	// such throttling); "" when no period was held or elsewhere.
	TimerThrottling string `json:"timer_throttling,omitempty"`
}

// ThrottlingOptedOut is Conditions.TimerThrottling when the process opted
// out of Windows 11's timer-resolution throttling, so a request held while
// its console was minimised or hidden still applied.
const ThrottlingOptedOut = "opted out"

// ThrottlingOutcome is Conditions.TimerThrottling for the opt-out's error:
// ThrottlingOptedOut for nil, otherwise "unavailable: " and why (builds
// before Windows 11 do not know the information class, and have no such
// throttling to opt out of).
func ThrottlingOutcome(err error) string {
	if err == nil {
		return ThrottlingOptedOut
	}
	return "unavailable: " + err.Error()
}

// windowsReleases names Windows 10 and 11 client builds by their release.
var windowsReleases = map[uint32]string{
	10240: "Windows 10 1507", 10586: "Windows 10 1511", 14393: "Windows 10 1607",
	15063: "Windows 10 1703", 16299: "Windows 10 1709", 17134: "Windows 10 1803",
	17763: "Windows 10 1809", 18362: "Windows 10 1903", 18363: "Windows 10 1909",
	19041: "Windows 10 2004", 19042: "Windows 10 20H2", 19043: "Windows 10 21H1",
	19044: "Windows 10 21H2", 19045: "Windows 10 22H2",
	22000: "Windows 11 21H2", 22621: "Windows 11 22H2", 22631: "Windows 11 23H2",
	26100: "Windows 11 24H2", 26200: "Windows 11 25H2",
}

// serverReleases names Windows Server builds.
var serverReleases = map[uint32]string{
	14393: "Windows Server 2016", 17763: "Windows Server 2019",
	20348: "Windows Server 2022", 26100: "Windows Server 2025",
}

// WindowsProduct names a Windows version for people: "Windows 7",
// "Windows 10 22H2", "Windows 11 build 27000", "Windows Server 2022".
func WindowsProduct(major, minor, build uint32, server bool) string {
	if major < 10 {
		switch {
		case major == 6 && minor == 1:
			return "Windows 7"
		case major == 6 && minor == 2:
			return "Windows 8"
		case major == 6 && minor == 3:
			return "Windows 8.1"
		}
		return fmt.Sprintf("Windows %d.%d", major, minor)
	}
	if server {
		if name, ok := serverReleases[build]; ok {
			return name
		}
		return fmt.Sprintf("Windows Server build %d", build)
	}
	if name, ok := windowsReleases[build]; ok {
		return name
	}
	if build >= Build22000 {
		return fmt.Sprintf("Windows 11 build %d", build)
	}
	return fmt.Sprintf("Windows 10 build %d", build)
}
