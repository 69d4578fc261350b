package platform

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/tickscope/tickscope/internal/seam"
)

// The hold commands (apply, run, status, verify-global, global, startup)
// change things outside a measurement: another process's timer slack, the
// global-requests registry value, the startup holder. Each OS gives the
// methods of system in its own files (system_windows.go, system_linux.go,
// system_unix.go, system_other.go, lock_*.go); seam.System documents them
// once. What an OS lacks returns seam.ErrUnsupported.

// NewSystem returns the System of the OS tickscope runs on.
func NewSystem() seam.System { return system{} }

// system is this OS's seam.System.
type system struct{}

var _ seam.System = system{}

func (system) Executable() (string, error)          { return os.Executable() }
func (system) LookupEnv(name string) (string, bool) { return os.LookupEnv(name) }
func (system) TempDir() string                      { return os.TempDir() }

func (s system) Holder() (pid int, running bool) {
	release, err := s.Lock(seam.HolderLock)
	if err == nil {
		release()
		return 0, false
	}
	var locked *seam.LockedError
	if errors.As(err, &locked) {
		return locked.PID, true
	}
	return 0, false
}

// endHolder ends a running holder with kill and waits up to 2 s for its
// lock to be free.
func endHolder(kill func(pid int) error) error {
	pid, running := system{}.Holder()
	if !running {
		return nil
	}
	if pid == 0 {
		return errors.New("a holder runs but its process id could not be read")
	}
	if err := kill(pid); err != nil {
		return err
	}
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, running := (system{}).Holder(); !running {
			return nil
		}
	}
	return fmt.Errorf("the holder (process %d) still runs 2 s after it was ended", pid)
}
