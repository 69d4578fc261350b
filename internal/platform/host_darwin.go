package platform

import (
	"fmt"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tickscope/tickscope/internal/nativewait"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// unsupportedHere says what tickscope cannot do on macOS.
const unsupportedHere = "this OS has no timer-period request (Windows) or per-thread timer slack " +
	"(Linux) that tickscope can query or set: query reports the kernel only, and measure times " +
	"Go's time.Sleep with no setting"

// Supported is nil: macOS builds and measures Go's own waits.
func Supported() error { return nil }

// New returns the host tickscope runs on, with the extra portable methods
// among its own.
func New(extra ...PortableMethod) seam.Host { return darwinHost{extra: extra} }

// darwinHost measures Go's time.Sleep (kevent timers on the runtime's own
// threads) and the other portable methods, and sets nothing.
type darwinHost struct{ extra []PortableMethod }

func (h darwinHost) Query() (*timerinfo.Report, error) {
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

func (h darwinHost) Methods() []seam.Method {
	return portableMethods(h.extra)
}

// Now uses Go's monotonic clock, which on macOS is mach_absolute_time.
func (h darwinHost) Now() int64 { return nativewait.Now() }

func (h darwinHost) PrepareThread() (string, func()) {
	return "normal (not raised: " + runtime.GOOS + ")", func() {}
}

func (h darwinHost) Apply(s timerinfo.Setting) (timerinfo.Setting, func() error, error) {
	noop := func() error { return nil }
	if !s.IsZero() {
		return timerinfo.Setting{}, noop, fmt.Errorf("timer settings on %s: %w", runtime.GOOS, seam.ErrUnsupported)
	}
	return timerinfo.Setting{}, noop, nil
}

func (h darwinHost) Observe() seam.Observation { return seam.Observation{} }

func (h darwinHost) NewWaiter(method string, delay time.Duration) (seam.Waiter, error) {
	if w := newPortableWaiter(method, delay, h.Now, h.extra); w != nil {
		return w, nil
	}
	return nil, fmt.Errorf("unknown method %q", method)
}

func (h darwinHost) CPUTime() time.Duration { return rusageCPU() }
