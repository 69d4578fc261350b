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
// global-requests registry value, the startup holder. Those calls sit in
// system_windows.go, system_linux.go and system_other.go, beside the Host,
// with the same rule: each OS file says what it does, and what an OS lacks
// returns ErrUnsupported.

// HolderRunning reports the process id of a running startup holder, or 0.
func HolderRunning() int {
	release, err := Lock(seam.HolderLock)
	if err == nil {
		release()
		return 0
	}
	var locked *seam.LockedError
	if errors.As(err, &locked) {
		if locked.PID == 0 {
			return -1
		}
		return locked.PID
	}
	return 0
}

// endHolder ends a running holder with kill and waits up to 2 s for its
// lock to be free.
func endHolder(kill func(pid int) error) error {
	pid := HolderRunning()
	if pid == 0 {
		return nil
	}
	if pid < 0 {
		return errors.New("a holder runs but its process id could not be read")
	}
	if err := kill(pid); err != nil {
		return err
	}
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if HolderRunning() == 0 {
			return nil
		}
	}
	return fmt.Errorf("the holder (process %d) still runs 2 s after it was ended", pid)
}

// NewSystem returns the System of the OS tickscope runs on.
func NewSystem() seam.System { return osSystem{} }

// osSystem forwards to each OS's functions in system_*.go and lock_*.go.
type osSystem struct{}

func (osSystem) Elevated() bool                                 { return Elevated() }
func (osSystem) Lock(name string) (func(), error)               { return Lock(name) }
func (osSystem) GlobalRequests() *uint32                        { return GlobalRequests() }
func (osSystem) SetGlobalRequests(on bool) error                { return SetGlobalRequests(on) }
func (osSystem) ProcessSlack(pid int) (int64, error)            { return ProcessSlack(pid) }
func (osSystem) SetProcessSlack(pid int, ns int64) error        { return SetProcessSlack(pid, ns) }
func (osSystem) IgnoreTimerThrottling() error                   { return IgnoreTimerThrottling() }
func (osSystem) DetachConsole() error                           { return DetachConsole() }
func (osSystem) WatchDesktopEscape(stop func()) (func(), error) { return WatchDesktopEscape(stop) }
func (osSystem) Executable() (string, error)                    { return os.Executable() }
func (osSystem) LookupEnv(name string) (string, bool)           { return os.LookupEnv(name) }
func (osSystem) TempDir() string                                { return os.TempDir() }

func (osSystem) Startup() seam.Startup {
	// A nil Startup of a concrete type would not compare equal to nil.
	if st := StartupHolder(); st != nil {
		return st
	}
	return nil
}

func (osSystem) Holder() (pid int, running bool) {
	switch pid := HolderRunning(); {
	case pid < 0:
		return 0, true
	case pid > 0:
		return pid, true
	}
	return 0, false
}
