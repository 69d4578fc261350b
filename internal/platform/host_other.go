//go:build !linux && !windows && !darwin

package platform

import (
	"runtime"
	"time"

	"github.com/tickscope/tickscope/internal/nativewait"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// Supported says that tickscope does not serve this OS (FreeBSD, OpenBSD,
// ...): it builds here, so that the module does, and every command refuses
// to run with this error.
func Supported() error { return notSupportedHere }

var notSupportedHere = &UnsupportedError{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH}

// New returns a host that measures nothing and answers every request with
// Supported's error. It still lists Go's own wait methods, which exist on
// every OS, so that the commands' help (which names the methods) can be
// built and printed here; every command refuses to run before it would
// wait.
func New(extra ...PortableMethod) seam.Host { return unsupportedHost{extra: extra} }

type unsupportedHost struct{ extra []PortableMethod }

func (unsupportedHost) Query() (*timerinfo.Report, error) { return nil, notSupportedHere }
func (h unsupportedHost) Methods() []seam.Method          { return portableMethods(h.extra) }

// Now is Go's monotonic clock, which needs nothing of the OS.
func (unsupportedHost) Now() int64 { return nativewait.Now() }

func (unsupportedHost) PrepareThread() (string, func()) { return notSupportedHere.Error(), func() {} }

func (unsupportedHost) Apply(timerinfo.Setting) (timerinfo.Setting, func() error, error) {
	return timerinfo.Setting{}, func() error { return nil }, notSupportedHere
}

func (unsupportedHost) Observe() seam.Observation { return seam.Observation{} }

func (unsupportedHost) NewWaiter(string, time.Duration) (seam.Waiter, error) {
	return nil, notSupportedHere
}

func (unsupportedHost) CPUTime() time.Duration { return 0 }
