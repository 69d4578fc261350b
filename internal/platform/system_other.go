//go:build !linux && !windows

package platform

import "github.com/tickscope/tickscope/internal/seam"

// On this OS tickscope holds nothing: there is no timer-period request
// (system_unix.go), no per-process timer slack it can set, and no startup
// holder.

// ProcessSlack is Linux's.
func ProcessSlack(int) (int64, error) { return 0, seam.ErrUnsupported }

// SetProcessSlack is Linux's.
func SetProcessSlack(int, int64) error { return seam.ErrUnsupported }

// StartupHolder: this OS has none that tickscope installs.
func StartupHolder() seam.Startup { return nil }
