// Package who says which processes hold the timer, as plain data and pure
// code: on Windows the decoder of the Microsoft-Windows-Kernel-Power
// events that name each process's timer request (laid out from the
// provider's manifest) and the ETW session's life (stop a leftover, start,
// ask for the rundown, always stop), driven through the Tracer interface;
// on Linux the scan of a /proc and /sys tree (an fs.FS) for
// /dev/cpu_dma_latency holders, threads with a timer slack other than the
// default, real-time threads and disabled cpuidle states; and for
// `who --watch`, the tracking of how long each process held what.
//
// It does no I/O of its own: package platform passes the real /proc and
// the real ETW calls, and tests pass a fake tree and a fake tracer.
package who

import (
	"cmp"
	"slices"
)

// Snapshot is who holds what at one moment. Exactly one of Windows and
// Linux is set.
type Snapshot struct {
	Windows *Windows `json:"windows,omitempty"`
	Linux   *Linux   `json:"linux,omitempty"`
}

// Windows is what the Kernel-Power rundown told.
type Windows struct {
	// Holders are the processes holding a timer request, finest first
	// (SystemTimeResolutionRequestRundown, event 97).
	Holders []Holder `json:"holders"`
	// Timer is the timer's own rundown (SystemTimeResolutionRundown,
	// event 96), nil when the rundown did not carry it.
	Timer *TimerRundown `json:"timer"`
	// Incomplete: the read was stopped (ESC, Ctrl+C) before the rundown
	// ended, so Holders may lack some.
	Incomplete bool `json:"incomplete,omitempty"`
}

// Holder is one process's outstanding timer request.
type Holder struct {
	PID uint32 `json:"pid"`
	// Image is the application name the event carries (an NT path such as
	// \Device\HarddiskVolume3\Games\game.exe).
	Image       string `json:"image"`
	Period100ns uint32 `json:"period_100ns"`
	// Self marks tickscope's own request.
	Self bool `json:"self"`
}

// TimerRundown is event 96: the timer's periods and the kernel's own
// requests, in 100 ns units.
type TimerRundown struct {
	Current100ns         uint32 `json:"current_100ns"`
	Finest100ns          uint32 `json:"finest_100ns"`
	Coarsest100ns        uint32 `json:"coarsest_100ns"`
	KernelRequests       uint32 `json:"kernel_requests"`
	KernelRequested100ns uint32 `json:"kernel_requested_100ns"`
}

// sortHolders puts the finest request first, then by process id.
func sortHolders(h []Holder) {
	slices.SortFunc(h, func(a, b Holder) int {
		return cmp.Or(cmp.Compare(a.Period100ns, b.Period100ns), cmp.Compare(a.PID, b.PID))
	})
}

// Linux is what a scan of /proc and /sys found.
type Linux struct {
	// CPUDMALatencyUs is the /dev/cpu_dma_latency value in force (the
	// smallest request of all holders; 2000000000 when none), nil when it
	// could not be read.
	CPUDMALatencyUs *int32 `json:"cpu_dma_latency_us"`
	// DMALatencyHolders are the processes holding /dev/cpu_dma_latency
	// open: each holds a request while it does (the kernel does not say
	// which value each asked for, only the smallest, in force).
	DMALatencyHolders []Process `json:"cpu_dma_latency_holders"`
	// DefaultSlackNs is the timer slack threads are compared with: the
	// kernel's default, 50 µs.
	DefaultSlackNs int64 `json:"default_slack_ns"`
	// Slack are the threads of user processes whose timer slack is not
	// the default (real-time threads are listed under RealTime instead:
	// their slack is ignored).
	Slack []Thread `json:"slack_threads"`
	// RealTime are the threads of user processes scheduled SCHED_FIFO or
	// SCHED_RR.
	RealTime []Thread `json:"realtime_threads"`
	// RealTimeKernelThreads counts the kernel's own SCHED_FIFO/RR threads
	// (migration, watchdog...), which every kernel has.
	RealTimeKernelThreads int `json:"realtime_kernel_threads"`
	// IdleDisabled are the cpuidle states disabled on at least one CPU.
	IdleDisabled []IdleState `json:"cpuidle_disabled"`
	// Unreadable says what could not be read, and why: the scan reports
	// what it saw and never guesses the rest.
	Unreadable []Unreadable `json:"unreadable"`
}

// DefaultSlackNs is the kernel's default timer slack (50 µs,
// include/linux/sched.h's initial value, prctl(2)).
const DefaultSlackNs = 50_000

// Process is a process that holds something.
type Process struct {
	PID  int    `json:"pid"`
	Name string `json:"name"` // the kernel's comm
	Self bool   `json:"self"` // tickscope itself
}

// Thread is one thread and what it holds.
type Thread struct {
	PID  int    `json:"pid"`
	TID  int    `json:"tid"`
	Name string `json:"name"` // the thread's comm
	// SlackNs is its timer slack (in Slack).
	SlackNs int64 `json:"slack_ns,omitempty"`
	// Policy is SCHED_FIFO or SCHED_RR, with its priority (in RealTime).
	Policy   string `json:"policy,omitempty"`
	Priority int    `json:"priority,omitempty"`
}

// IdleState is a cpuidle state and the CPUs on which it is disabled.
type IdleState struct {
	State string `json:"state"` // the directory: state2
	Name  string `json:"name"`  // its name: C6
	CPUs  []int  `json:"cpus"`
}

// Unreadable is something the scan could not read.
type Unreadable struct {
	What string `json:"what"`
	Why  string `json:"why"`
}
