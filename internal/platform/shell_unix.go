//go:build unix

package platform

import (
	"os/exec"
	"runtime"

	"github.com/tickscope/tickscope/internal/seam"
)

// OpenURL runs the desktop's opener: open on macOS, xdg-open (the
// freedesktop.org one) elsewhere. It does not wait for it: some openers
// return only when the browser they started exits. What the opener and
// the browser print is discarded. Its argument is on a command line every
// local user can read (/proc/PID/cmdline): ui gives it a launcher file's
// path, never the address with its token.
func (shell) OpenURL(url string) error {
	opener := "xdg-open"
	if runtime.GOOS == "darwin" {
		opener = "open"
	}
	cmd := exec.Command(opener, url) // Stdout and Stderr nil: discarded
	if err := cmd.Start(); err != nil {
		return &seam.OSError{Call: opener, Err: err}
	}
	go cmd.Wait()
	return nil
}

// RunElevated: only Windows has a consent prompt tickscope uses; the
// settings that need root elsewhere are refused with "needs root".
func (shell) RunElevated(string, []string) (int, error) { return 0, seam.ErrUnsupported }
