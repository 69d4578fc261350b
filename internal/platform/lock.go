package platform

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LockedError says that another tickscope holds an exclusive lock.
type LockedError struct {
	What string
	PID  int // 0 when it could not be read
}

func (e *LockedError) Error() string {
	if e.PID == 0 {
		return fmt.Sprintf("another tickscope %s is running", e.What)
	}
	return fmt.Sprintf("another tickscope %s is running (process %d)", e.What, e.PID)
}

// lockPath is the file that names the holder of a lock: in the user's
// temporary directory, so that it needs no privileges.
func lockPath(name string) string {
	return filepath.Join(os.TempDir(), "tickscope-"+name+".lock")
}

// readPID reads the process id a lock file names, or 0.
func readPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}
