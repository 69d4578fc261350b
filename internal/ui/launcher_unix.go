//go:build unix

package ui

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockLauncher takes an exclusive flock(2) on this run's launcher page,
// which the kernel drops when the run exits however it exits; being
// advisory, it does not keep the browser from reading the page.
func lockLauncher(f *os.File) error {
	return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
}

// tryLockLauncher reports whether another run's page could be locked: its
// run has ended.
func tryLockLauncher(f *os.File) bool { return lockLauncher(f) == nil }
