package attribution

import (
	"cmp"
	"slices"
	"strconv"
)

// EventKind is what an Event is.
type EventKind uint8

// The events the attribution reads.
const (
	HrtimerStart EventKind = iota + 1
	HrtimerExpireEntry
	HrtimerExpireExit
	// VectorEntry and VectorExit are irq_vectors' entry and exit events
	// (local_timer, reschedule, call_function_single, ...): Name is the
	// vector's row in /proc/interrupts (LOC, RES, CAL, ...).
	VectorEntry
	VectorExit
	IRQEntry
	IRQExit
	SoftirqEntry
	SoftirqExit
	// NMI is nmi:nmi_handler, traced when a handler returns: it ran for
	// DurationNS before Time.
	NMI
	Waking
	Wakeup
	Switch
	Migrate
	CPUIdle
)

// IdleExit is power:cpu_idle's state when the CPU leaves idle
// (PWR_EVENT_EXIT, (u32)-1).
const IdleExit = -1

// Event is one decoded trace event.
type Event struct {
	// Time is CLOCK_MONOTONIC nanoseconds (the instance's trace_clock
	// mono); CPU the buffer it was read from.
	Time int64
	CPU  int
	Kind EventKind
	// PID is common_pid: the thread current when it was traced.
	PID int
	// Hrtimer, Expires, SoftExpires: the timer events' hrtimer address;
	// hrtimer_start's expires and softexpires.
	Hrtimer              uint64
	Expires, SoftExpires int64
	// Name: the IRQ's handler or the vector's row (IRQEntry,
	// VectorEntry), the softirq's kind (SoftirqEntry), the woken or moved
	// thread's comm (Waking, Wakeup, Migrate). IRQ is the IRQ number or
	// vector, Vec the softirq's number.
	Name string
	IRQ  int
	Vec  int
	// DurationNS is an NMI handler's time.
	DurationNS int64
	// TargetPID and TargetCPU: the woken thread and the CPU it will run
	// on (Waking, Wakeup); the moved thread and its new CPU (Migrate),
	// from OrigCPU.
	TargetPID, TargetCPU, OrigCPU int
	// PrevPID/PrevComm switched out for NextPID/NextComm (Switch);
	// PrevState is the state it left in: 0, or only bits above the low
	// byte (the preempted mark, "R+"), when it stayed runnable.
	PrevPID, NextPID   int
	PrevComm, NextComm string
	PrevState          int64
	// State is cpu_idle's state: the idle state entered, or IdleExit.
	State int
}

// Blocked reports whether a Switch's previous thread went to sleep
// rather than being preempted: the task states S, D, T, t, X, Z, P and I
// are the low byte of prev_state (include/trace/events/sched.h,
// __trace_sched_switch_state).
func (e Event) Blocked() bool { return e.PrevState&0xff != 0 }

// Gap is a stretch of a CPU's trace in which events were lost, or of
// every CPU's (CPU AllCPUs) in which the trace was not recording: nothing
// is attributed across it, and what a CPU ran before it is not assumed
// after it.
type Gap struct {
	CPU      int
	From, To int64
}

// AllCPUs is a Gap's CPU when it is every CPU's.
const AllCPUs = -1

// on reports whether the gap is cpu's.
func (g Gap) on(cpu int) bool { return g.CPU == AllCPUs || g.CPU == cpu }

// SoftirqNames are the softirq kinds by number (include/linux/interrupt.h,
// the enum of HI_SOFTIRQ to RCU_SOFTIRQ; /proc/softirqs' rows).
var SoftirqNames = []string{"HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU"}

// SoftirqName is a softirq number's kind.
func SoftirqName(vec int) string {
	if vec >= 0 && vec < len(SoftirqNames) {
		return SoftirqNames[vec]
	}
	return "softirq " + strconv.Itoa(vec)
}

// Sort orders events by time, keeping the order of events of the same
// time (a CPU's buffer is in order).
func Sort(evs []Event) {
	slices.SortStableFunc(evs, func(a, b Event) int { return cmp.Compare(a.Time, b.Time) })
}

// thread names a thread as comm:pid.
func thread(comm string, pid int) string {
	if comm == "" {
		comm = "<...>"
	}
	return comm + ":" + strconv.Itoa(pid)
}
