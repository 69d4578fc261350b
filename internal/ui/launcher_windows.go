package ui

import (
	"os"

	"golang.org/x/sys/windows"
)

// lockLauncher locks one byte of this run's launcher page far past its
// end (LockFileEx, exclusive, without waiting): Windows' locks are
// mandatory on the bytes they cover, and none of the page's is, so the
// browser still reads it; the system releases the lock when the run's
// handle closes, however the run ends ("LockFileEx function", Microsoft
// Learn).
func lockLauncher(f *os.File) error {
	ol := windows.Overlapped{Offset: 0, OffsetHigh: 0x7fffffff}
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
}

// tryLockLauncher reports whether another run's page could be locked: its
// run has ended.
func tryLockLauncher(f *os.File) bool { return lockLauncher(f) == nil }
