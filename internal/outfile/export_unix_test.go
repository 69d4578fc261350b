//go:build unix

package outfile

import "testing"

// Umask is umask.
var Umask = umask

// NoProcUmask makes umask find no Umask line in /proc/self/status for the
// rest of t, as on macOS or a Linux before 4.7.
func NoProcUmask(t *testing.T) {
	procStatus = "/nonexistent/status"
	t.Cleanup(func() { procStatus = "/proc/self/status" })
}
