//go:build !windows

package platform

import (
	"errors"
	"os"
	"strconv"

	"github.com/tickscope/tickscope/internal/seam"
	"golang.org/x/sys/unix"
)

func (system) Lock(name string) (release func(), err error) {
	// flock on a file that names the holder's process id: the kernel drops
	// the lock when its holder exits, however it exits.
	path := lockPath(name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, &seam.OSError{Call: "open " + path, Err: err}
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &seam.LockedError{What: name, PID: readPID(path)}
		}
		return nil, &seam.OSError{Call: "flock " + path, Err: err}
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() {
		f.Truncate(0)
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}
