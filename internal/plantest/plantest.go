// Package plantest is what the planners' tests share (bench's, measure's):
// a host that offers wait methods and nothing else, the machines they plan
// for, and the check of a usage error's words.
package plantest

import (
	"errors"
	"testing"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// Host offers its methods and nothing else: planning never measures, and
// any other call panics on the nil seam.Host.
type Host struct {
	seam.Host
	WaitMethods []seam.Method
}

// Methods returns the host's wait methods.
func (h Host) Methods() []seam.Method { return h.WaitMethods }

var (
	// WindowsHost offers Windows' methods: Sleep, the high-resolution
	// waitable timer and timeSetEvent.
	WindowsHost = Host{WaitMethods: []seam.Method{{Name: "sleep", WholeMilliseconds: true}, {Name: "waitable-hr"}, {Name: "timesetevent", Schedule: seam.Periodic, WholeMilliseconds: true}}}
	// LinuxHost offers Linux's methods: clock_nanosleep absolute and
	// relative, epoll and the spin.
	LinuxHost = Host{WaitMethods: []seam.Method{{Name: "clock-abs", Schedule: seam.Periodic}, {Name: "nanosleep"}, {Name: "epoll", WholeMilliseconds: true}, {Name: "spin", Schedule: seam.Periodic}}}
)

// The machines the planners plan for.
var (
	// Windows is a Windows machine's report at its 15.625 ms default,
	// able to go to 0.5 ms.
	Windows = &timerinfo.Report{OS: "windows", Windows: &timerinfo.Windows{Finest100ns: 5000, Coarsest100ns: 156250, Current100ns: 156250}}
	// Linux is a Linux machine's report without root.
	Linux = &timerinfo.Report{OS: "linux", Linux: &timerinfo.Linux{}}
	// LinuxRoot is a Linux machine's report as root.
	LinuxRoot = &timerinfo.Report{OS: "linux", Linux: &timerinfo.Linux{Root: true}}
)

// Usage fails the test unless err is a usage error whose message is want,
// or, with want "", unless err is nil.
func Usage(t testing.TB, err error, want string) {
	t.Helper()
	var u *options.UsageError
	switch {
	case want == "" && err != nil:
		t.Errorf("err = %v, want none", err)
	case want != "" && (!errors.As(err, &u) || err.Error() != want):
		t.Errorf("err = %v, want the usage error %q", err, want)
	}
}
