// Package procstat reads what Linux says, without root and without
// tracing, about where a CPU's time went: the first layer of tickscope's
// attribution of late wake-ups. Each reader is a pure parser over an
// fs.FS rooted at "/" (os.DirFS("/") on a real system, fstest.MapFS in
// tests), with a delta between two snapshots.
//
// What it reads, and where each format is published:
//
//   - /proc/PID/task/TID/schedstat: three numbers, the thread's time on a
//     CPU (ns), its time waiting on a run queue (ns), and the number of
//     timeslices it ran (Documentation/scheduler/sched-stats.rst, "/proc/<pid>/schedstat";
//     fs/proc/base.c, proc_pid_schedstat). The file exists only with
//     CONFIG_SCHED_INFO; without it ReadSchedStat says so (ErrNoSchedInfo).
//   - /proc/interrupts: one column per online CPU, named by the header
//     (CPU3 stays CPU3 when CPU2 is offline), one row per IRQ line with its
//     chip and name, then the architecture's named rows (x86: NMI, LOC,
//     RES, CAL, TLB, ...; ERR and MIS carry one system-wide count)
//     (Documentation/filesystems/proc.rst, 1.2 "/proc/interrupts";
//     kernel/irq/proc.c, show_interrupts; arch/x86/kernel/irq.c,
//     arch_show_interrupts).
//   - /proc/softirqs: one column per possible CPU, one row per softirq kind
//     (HI, TIMER, NET_TX, NET_RX, BLOCK, IRQ_POLL, TASKLET, SCHED, HRTIMER,
//     RCU) (Documentation/filesystems/proc.rst, "/proc/softirqs";
//     fs/proc/softirqs.c).
//   - /proc/stat: the cpuN lines of online CPUs, whose eighth column is
//     steal, the time the hypervisor ran something else while this
//     virtual CPU wanted to run, in USER_HZ ticks (Documentation/filesystems/proc.rst,
//     1.8 "/proc/stat"). A hypervisor that does not report steal leaves
//     it 0: 0 is not proof that the host did not delay the guest.
//   - /sys/devices/system/cpu/cpuN/cpuidle/stateK/{name,latency,usage,time}:
//     each idle state's name, exit latency (µs), number of entries and
//     time spent in it (µs) (Documentation/admin-guide/pm/cpuidle.rst,
//     "Representation of Idle States"; Documentation/ABI/testing/sysfs-devices-system-cpu).
//     Without a cpuidle driver (current_driver "none", as in many virtual
//     machines) the directories are absent, and Idle says so.
//
// Counters of /proc/interrupts and /proc/softirqs are the kernel's
// unsigned int: a delta that went backwards is read as one wrap of 32
// bits. The u64 counters of /proc/stat and cpuidle never wrap in practice:
// one that went backwards is reported as a reset, never as a huge delta.
package procstat
