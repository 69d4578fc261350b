//go:build !windows

package platform

import (
	"os"

	"github.com/tickscope/tickscope/internal/seam"
)

// What only Windows has, for every other OS: no timer-request throttling,
// no console to detach from, no desktop-wide keyboard hook, no registry.

func (system) UserSID() (string, error)                  { return "", seam.ErrUnsupported }
func (system) Elevated() bool                            { return os.Geteuid() == 0 }
func (system) IgnoreTimerThrottling() error              { return seam.ErrUnsupported }
func (system) DetachConsole() error                      { return seam.ErrUnsupported }
func (system) WatchDesktopEscape(func()) (func(), error) { return nil, seam.ErrUnsupported }
func (system) GlobalRequests() *uint32                   { return nil }
func (system) SetGlobalRequests(bool) error              { return seam.ErrUnsupported }

// A signal sent to tickscope's process id reaches only tickscope: run passes
// it on to its program.
func (system) ForwardSignals() bool { return true }
