//go:build !windows

package platform

import (
	"os"

	"github.com/tickscope/tickscope/internal/seam"
)

// What only Windows has, for every other OS.

// Elevated reports whether tickscope runs as root.
func Elevated() bool { return os.Geteuid() == 0 }

// IgnoreTimerThrottling is Windows 11's: no other OS throttles timer
// requests.
func IgnoreTimerThrottling() error { return seam.ErrUnsupported }

// DetachConsole is Windows's.
func DetachConsole() error { return seam.ErrUnsupported }

// WatchDesktopEscape is Windows's: a terminal's ESC is package escape's.
func WatchDesktopEscape(func()) (func(), error) { return nil, seam.ErrUnsupported }

// GlobalRequests is Windows's registry value.
func GlobalRequests() *uint32 { return nil }

// SetGlobalRequests is Windows's registry value.
func SetGlobalRequests(bool) error { return seam.ErrUnsupported }
