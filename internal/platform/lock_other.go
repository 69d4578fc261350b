//go:build !linux && !windows

package platform

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"

	"github.com/tickscope/tickscope/internal/seam"
)

// On a Unix other than Linux the locks are flock(2)s in the same
// directories (lock_unix.go): there is no open file description lock to
// test without taking, and no startup holder to probe for.

// tryLock takes f's lock without waiting; busy is another's holding it.
func tryLock(f *os.File) (busy bool, err error) {
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	switch {
	case errors.Is(err, unix.EWOULDBLOCK):
		return true, nil
	case err != nil:
		return false, &seam.OSError{Call: "flock " + f.Name(), Err: err}
	}
	return false, nil
}

// Holder: this OS has no startup holder (system_other.go).
func (system) Holder() (pid int, running bool) { return 0, false }
