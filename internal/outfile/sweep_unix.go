//go:build unix

package outfile

import (
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// lockTemp takes an exclusive lock (flock) on a temporary file for as long
// as this run holds it open: sweepStale removes only a file nobody holds.
// A file system without flock leaves the file unlocked, and the sweep
// then relies on the file's age alone.
func lockTemp(f *os.File) { unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) }

// sweepStale removes from dir the temporary files an earlier run of
// tickscope left behind when it was killed (a named temporary, where
// O_TMPFILE is not available, or one killed in the instant between its
// link and its rename): a regular file named as tickscope names them,
// owned by the caller, last written before this run began, and locked by
// no running tickscope. Another user's file, or anything else, is left
// alone; a failure leaves the file, which harms nothing but space.
func sweepStale(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Type().IsRegular() && staleTemp.MatchString(e.Name()) {
			removeIfStale(filepath.Join(dir, e.Name()))
		}
	}
}

func removeIfStale(path string) {
	// Opened without following a link or blocking, then checked by what
	// was opened, so that the checks are of the file removed.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || !fi.ModTime().Before(runStart) {
		return
	}
	if owner, ok := ownerOf(fi); !ok || owner != uint32(os.Geteuid()) {
		return
	}
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return // a running tickscope holds it
	}
	if now, err := os.Lstat(path); err == nil && os.SameFile(fi, now) {
		os.Remove(path)
	}
}
