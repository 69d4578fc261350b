//go:build !linux && !windows

package platform

import (
	"fmt"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// unsupportedHere says what tickscope cannot do on this OS.
const unsupportedHere = "this OS has no timer-period request (Windows) or per-thread timer slack " +
	"(Linux) that tickscope can query or set: query reports the kernel only, and measure times " +
	"Go's time.Sleep with no setting"

// New returns the host tickscope runs on.
func New() seam.Host { return otherHost{base: time.Now()} }

// otherHost measures Go's time.Sleep (on macOS, kevent timers on the
// runtime's own threads) and sets nothing.
type otherHost struct{ base time.Time }

func (h otherHost) Query() (*timerinfo.Report, error) {
	var uts unix.Utsname
	release := "unknown"
	if err := unix.Uname(&uts); err == nil {
		release = unix.ByteSliceToString(uts.Release[:])
	}
	return &timerinfo.Report{
		OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(),
		Other:    &timerinfo.Other{KernelRelease: release, Unsupported: unsupportedHere},
		Warnings: []string{},
	}, nil
}

func (h otherHost) Methods() []seam.Method {
	return portableMethods()
}

// Now uses Go's monotonic clock, which on macOS is mach_absolute_time.
func (h otherHost) Now() int64 { return int64(time.Since(h.base)) }

func (h otherHost) PrepareThread() (string, func()) {
	return "normal (not raised: " + runtime.GOOS + ")", func() {}
}

func (h otherHost) Apply(s timerinfo.Setting) (timerinfo.Setting, func() error, error) {
	noop := func() error { return nil }
	if !s.IsZero() {
		return timerinfo.Setting{}, noop, fmt.Errorf("timer settings on %s: %w", runtime.GOOS, seam.ErrUnsupported)
	}
	return timerinfo.Setting{}, noop, nil
}

func (h otherHost) Observe() seam.Observation { return seam.Observation{} }

func (h otherHost) NewWaiter(method string, delay time.Duration) (seam.Waiter, error) {
	if w := newPortableWaiter(method, delay, h.Now); w != nil {
		return w, nil
	}
	return nil, fmt.Errorf("unknown method %q", method)
}

func (h otherHost) CPUTime() time.Duration { return rusageCPU() }
