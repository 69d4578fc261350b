package platform

import (
	"errors"
	"fmt"
	"time"
)

// The hold commands (apply, run, status, verify-global, global, startup)
// change things outside a measurement: another process's timer slack, the
// global-requests registry value, the startup holder. Those calls sit in
// system_windows.go, system_linux.go and system_other.go, beside the Host,
// with the same rule: each OS file says what it does, and what an OS lacks
// returns ErrUnsupported.

// Startup is the OS's way of starting the holder when the user logs on
// (Windows: a Task Scheduler task) or at boot (Linux: a systemd unit).
// Definitions are generated and parsed by package persist; this only
// reads, installs and removes them.
type Startup interface {
	// Describe names it for people: "Task Scheduler task tickscope".
	Describe() string
	// Read returns the installed definition, or nil when none is installed.
	Read() ([]byte, error)
	// Install registers a definition, replacing one that exists.
	Install(definition []byte) error
	// Start runs the holder now.
	Start() error
	// Stop ends a running holder, if one runs.
	Stop() error
	// Delete unregisters the definition.
	Delete() error
	// DeleteByHand is the command a user types to delete what is installed
	// under tickscope's name, for a definition tickscope did not write.
	DeleteByHand() string
}

// ErrNoProcess is a process id that names no process.
var ErrNoProcess = errors.New("no such process")

// HolderLock is the lock the startup holder takes while it holds, so that
// status can tell whether it runs and startup remove can end it.
const HolderLock = "holder"

// HolderRunning reports the process id of a running startup holder, or 0.
func HolderRunning() int {
	release, err := Lock(HolderLock)
	if err == nil {
		release()
		return 0
	}
	var locked *LockedError
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
