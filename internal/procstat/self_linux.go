package procstat

import "golang.org/x/sys/unix"

// SelfSchedStat reads the calling thread's schedstat. The caller must be
// locked to its thread (runtime.LockOSThread) for two reads to be of the
// same thread.
func SelfSchedStat() (SchedStat, error) { return ReadSchedStat(Root(), unix.Gettid()) }
