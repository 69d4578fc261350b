// Package explain is `tickscope explain`: it measures waits as measure
// does (the same methods, the one loop of package sample, the raw file)
// and, for every wait later than a threshold (the run's own p99 lateness
// unless Options.Over says), splits its lateness into causes with package
// attribution, then sums them, worst first, with the names of the threads,
// IRQs and softirqs that did it.
//
// Two layers, chosen by Options.Layer or, by default, by what this
// machine allows:
//
//   - Layer 0 needs no root and no tracing: the measuring thread's
//     run-queue wait read from /proc/self/task/TID/schedstat before and
//     after each wait, a wait armed late said once, and the window's
//     /proc/interrupts, /proc/softirqs, steal and cpuidle deltas
//     (package procstat).
//   - Layer 1 needs root and tracefs: a tracefs instance of tickscope's
//     own (instances/tickscope-explain, package tracefs) with generic
//     tracepoints, made for the run and removed after it; a leftover one
//     of ours is removed first, and the top-level buffer and every other
//     instance are left as they are.
//
// What the OS does sits behind System, one file per OS: Linux has both
// layers; Windows has layer 1 only, elevated, from an ETW kernel session
// of its own (system_windows.go) attributed with etwkernel's tick model
// (etw.go); every other OS says it cannot explain yet (ErrUnsupported).
package explain
