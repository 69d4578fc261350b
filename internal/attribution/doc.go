// Package attribution says why one wait woke late: it splits the wait's
// lateness into causes, in nanoseconds that add up to the lateness
// exactly, and sums them over many waits, worst first, with the names of
// the threads, IRQs and softirqs that did it. It is pure: it reads events
// already decoded from the kernel's trace buffer (internal/tracefs) and
// counters already read from /proc (internal/procstat).
//
// The attribution follows rtla's timerlat auto-analysis (the Linux kernel
// tree's tools/tracing/rtla/src/timerlat_aa.c; Documentation/tools/rtla/
// and Documentation/trace/timerlat-tracer.rst describe its output: IRQ
// handler delay, exit from idle, timer IRQ duration, blocking thread, NMI,
// IRQ, softirq and thread interference), mapped from the timerlat and
// osnoise tracers' own events, which many kernels lack, onto generic
// tracepoints every kernel has (Documentation/trace/events.rst; their
// layouts are each kernel's events/SYSTEM/EVENT/format):
// timer:hrtimer_start, hrtimer_expire_entry/exit (include/trace/events/timer.h),
// irq_vectors:local_timer_entry/exit and the other vectors
// (arch/x86/include/asm/trace/irq_vectors.h), irq:irq_handler_entry/exit
// and softirq_entry/exit (include/trace/events/irq.h), nmi:nmi_handler
// (include/trace/events/nmi.h), sched:sched_waking, sched_wakeup,
// sched_switch and sched_migrate_task (include/trace/events/sched.h), and
// power:cpu_idle (include/trace/events/power.h; Documentation/trace/events-power.rst).
//
// The lateness of a wait is its wake-up time (the clock read after the wait
// returned) less the hrtimer's softexpires, the deadline asked for. Its
// timeline, and the cause each part is given:
//
//   - from softexpires to expires (or to the timer IRQ, if it came
//     sooner): timer slack, the range the kernel may defer the timer in
//     to batch it with others (Documentation/timers/hrtimers.rst);
//   - from expires to the entry of the interrupt that expired the timer:
//     the IRQ delay, with the idle state the CPU was in (cpu_idle) or the
//     thread it was running; the parts of it spent in another IRQ handler
//     or an NMI are theirs (rtla's "previous IRQ interference");
//   - from that entry on, each instant goes to the innermost context on
//     the CPU that held the wait: the timer's CPU until the wake-up, then
//     the CPU the thread was woken onto (and moved to by
//     sched_migrate_task), until the thread's own clock read. NMI before
//     hard IRQ before softirq before thread, as osnoise counts each noise
//     net of what nests inside it: the timer IRQ's own duration; other
//     IRQs by handler or vector; softirqs by kind; the blocking thread,
//     the one found running first after the timer fired, until it switched
//     out, as comm:pid; other threads before ours; a CPU other than the
//     timer's that was idle (remote wake-up or migration); the timer's own
//     CPU idle after the IRQ (idle exit); and our thread from its
//     switch-in to its clock read (return to user space), less the
//     stretches in which it slept again before that read (own thread
//     blocked again: the Go runtime, a page fault, a lock).
//   - what none of that covers (no event says what the CPU was doing) is
//     unexplained: it is never hidden, and never negative.
//
// Overlaps are split by that order: one nanosecond goes to one cause only,
// so the causes always add up to the lateness.
//
// Two cases are said and not explained. A wait armed late, whose
// deadline had passed when the timer was started, inherits its lateness
// from the wait before it: it is one cause, "armed late", and the
// aggregate counts it apart rather than counting that lateness twice. A
// wait during which events were lost on a CPU it used (the ring buffer's
// missed-events flag, internal/tracefs), or while the trace was not
// recording on any CPU, is "not attributed": no guess is made across a
// gap, and what a CPU ran before one is not assumed after it.
//
// Layer 0, without tracing: a thread's run-queue wait read from its
// schedstat before and after a wait (Documentation/scheduler/sched-stats.rst)
// is at most the lateness it explains; the rest is unexplained, and the
// window's interrupt, softirq, steal and idle deltas are its context.
package attribution
