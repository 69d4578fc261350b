package procstat

import (
	"errors"
	"io/fs"
	"os"
)

// Snapshot is one read of every per-CPU counter procstat knows.
type Snapshot struct {
	Interrupts Table
	Softirqs   Table
	Stat       Stat
	Idle       Idle
}

// Read takes a Snapshot from an fs.FS rooted at /. Each file that fails
// is named in the error, and the rest are still read.
func Read(fsys fs.FS) (Snapshot, error) {
	var s Snapshot
	var errs []error
	var err error
	if s.Interrupts, err = ReadInterrupts(fsys); err != nil {
		errs = append(errs, err)
	}
	if s.Softirqs, err = ReadSoftirqs(fsys); err != nil {
		errs = append(errs, err)
	}
	if s.Stat, err = ReadStat(fsys); err != nil {
		errs = append(errs, err)
	}
	if s.Idle, err = ReadIdle(fsys); err != nil {
		errs = append(errs, err)
	}
	return s, errors.Join(errs...)
}

// Window is what the counters did between two Snapshots.
type Window struct {
	Interrupts TableDelta
	Softirqs   TableDelta
	Steal      []StealDelta
	Idle       []IdleDelta
	// StealGone and StealCame are the CPUs online in only one read of
	// /proc/stat.
	StealGone, StealCame []int
	// IdleDriver is the cpuidle driver of the second read ("none" or ""
	// when there is none: then Idle is empty).
	IdleDriver string
}

// Delta is after-before of every counter.
func Delta(before, after Snapshot) Window {
	w := Window{
		Interrupts: DeltaTable(before.Interrupts, after.Interrupts),
		Softirqs:   DeltaTable(before.Softirqs, after.Softirqs),
		Idle:       DeltaIdle(before.Idle, after.Idle),
		IdleDriver: after.Idle.Driver,
	}
	w.Steal, w.StealGone, w.StealCame = DeltaSteal(before.Stat, after.Stat)
	return w
}

// NoSteal reports whether no CPU had any steal in the window (or none
// reports it): a hypervisor that does not account steal reads the same as
// one that took nothing, so 0 is not proof that the host did not delay
// the guest.
func (w Window) NoSteal() bool {
	for _, s := range w.Steal {
		if s.Known && s.Ticks > 0 {
			return false
		}
	}
	return true
}

// Root is the real system's / as an fs.FS, for Read, ReadSchedStat and the
// other readers.
func Root() fs.FS { return os.DirFS("/") }
