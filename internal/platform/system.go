package platform

import (
	"os"

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

// GoRunTempDir is only compared with paths (seam.System): nothing of
// tickscope's is written or read in the temporary directory.
func (system) GoRunTempDir() string { return os.TempDir() }
