//go:build unix

package outfile

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// lockTemp takes an exclusive lock (flock) on a temporary file for as long
// as this run holds it open: sweepStale removes only a file nobody holds.
// A file system without flock leaves the file unlocked, and the sweep
// then relies on the file's age alone.
func lockTemp(f *os.File) { unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) }

// sweepStale removes from the directory held the temporary files an
// earlier run of tickscope left behind when it was killed (a named
// temporary, where O_TMPFILE is not available, or one killed in the
// instant between its link and its rename): a regular file named as
// tickscope names them, owned by the caller, last written before this run
// began, and locked by no running tickscope. Another user's file, or
// anything else, is left alone; a failure leaves the file, which harms
// nothing but space. The directory is read, and each file opened and
// removed, relative to the descriptor held.
func sweepStale(d heldDir) {
	fd, err := unix.Openat(d.fd(), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	dir := os.NewFile(uintptr(fd), d.path())
	defer dir.Close()
	entries, err := dir.ReadDir(-1)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Type().IsRegular() && staleTemp.MatchString(e.Name()) {
			removeIfStale(d, e.Name())
		}
	}
}

func removeIfStale(d heldDir, name string) {
	// Opened without following a link or blocking, then checked by what
	// was opened, so that the checks are of the file removed.
	fd, err := unix.Openat(d.fd(), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), name)
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
	opened, ok := fi.Sys().(*syscall.Stat_t)
	var now unix.Stat_t
	if ok && unix.Fstatat(d.fd(), name, &now, unix.AT_SYMLINK_NOFOLLOW) == nil &&
		uint64(now.Dev) == uint64(opened.Dev) && uint64(now.Ino) == uint64(opened.Ino) {
		unix.Unlinkat(d.fd(), name, 0)
	}
}
