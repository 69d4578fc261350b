//go:build !linux && !windows

package platform

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/tickscope/tickscope/internal/seam"
)

// On a Unix other than Linux the locks are flock(2)s in the same
// directories (lock_unix.go): there is no open file description lock to
// test without taking, and no startup holder to probe for.

func (system) Lock(name string) (release func(), err error) {
	d, err := thisLockDir()
	if err != nil {
		return nil, err
	}
	dirfd, err := openLockDir(d, true)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dirfd)
	f, err := openRecord(dirfd, d, name, true)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &seam.LockedError{What: name, PID: readRecordFile(f)}
		}
		return nil, &seam.OSError{Call: "flock " + f.Name(), Err: err}
	}
	if err := writeRecord(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		f.Truncate(0)
		f.Close()
	}, nil
}

// Holder: this OS has no startup holder (system_other.go).
func (system) Holder() (pid int, running bool) { return 0, false }
