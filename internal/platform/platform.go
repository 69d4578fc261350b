// Package platform implements tickscope's one seam to the operating system
// (the interfaces and types are package seam's): what the OS reports about
// its timers, the timer settings a process can request, the wait methods it
// offers, the high-resolution clock that times them (seam.Host), and what
// the hold commands change outside a measurement (seam.System). The native
// waits it measures are package nativewait's, which package precise shares.
//
// Each OS has one host file: host_windows.go, host_linux.go, host_darwin.go
// (Go's own waits, and the kernel's name), and host_other.go for every
// other OS, which builds and says "not supported on GOOS/GOARCH" (as
// golang.org/x/term's term_unsupported.go does). The model of Windows
// timers implements the same Host interface, so everything above this
// package runs unchanged against a real machine or a simulated one.
package platform

import (
	"fmt"

	"github.com/tickscope/tickscope/internal/seam"
)

// UnsupportedError says that tickscope does not serve an OS. It matches
// seam.ErrUnsupported.
type UnsupportedError struct {
	GOOS, GOARCH string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("not supported on %s/%s", e.GOOS, e.GOARCH)
}

// Is makes errors.Is(err, seam.ErrUnsupported) hold.
func (e *UnsupportedError) Is(target error) bool { return target == seam.ErrUnsupported }
