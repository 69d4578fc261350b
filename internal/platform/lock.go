package platform

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

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
