//go:build unix

package platform

import (
	"context"
	"os"

	"github.com/tickscope/tickscope/internal/seam"
)

// What only Windows has, for every other OS: no timer-request throttling,
// no console to detach from, no desktop-wide keyboard hook, no registry,
// no PE executables.

func (system) UserSID() (string, error)                  { return "", seam.ErrUnsupported }
func (system) Elevated() bool                            { return os.Geteuid() == 0 }
func (system) IgnoreTimerThrottling() error              { return seam.ErrUnsupported }
func (system) DetachConsole() error                      { return seam.ErrUnsupported }
func (system) WatchDesktopEscape(func()) (func(), error) { return nil, seam.ErrUnsupported }
func (system) GlobalRequests() *uint32                   { return nil }
func (system) SetGlobalRequests(bool) error              { return seam.ErrUnsupported }
func (system) ExeSubsystem(string) (uint16, error)       { return 0, seam.ErrUnsupported }

// No Windows service here: Linux's systemd unit (Startup) already starts
// at boot.
func (system) BootService() seam.Service { return nil }
func (system) RunService(string, func(context.Context, seam.ServiceRun) error) error {
	return seam.ErrUnsupported
}

// WatchResume: Unix sends a process no resume notification; a holder reads
// SleptFor at its checks instead.
func (system) WatchResume(func()) (func(), error) { return nil, seam.ErrUnsupported }

// Output goes where the parent put it: a terminal, a pipe, systemd's
// journal. No console is made for a process here, so none is alone on one.
func (system) Console() seam.Console { return seam.ConsoleShared }

// A signal sent to tickscope's process id reaches only tickscope: run passes
// it on to its program.
func (system) ForwardSignals() bool { return true }
