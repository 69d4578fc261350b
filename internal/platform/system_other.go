//go:build !linux && !windows

package platform

// On this OS tickscope holds nothing: there is no timer-period request,
// no per-process timer slack it can set, and no startup holder.

// Elevated reports whether tickscope runs as root.
func Elevated() bool { return false }

// IgnoreTimerThrottling is Windows 11's.
func IgnoreTimerThrottling() error { return ErrUnsupported }

// DetachConsole is Windows's.
func DetachConsole() error { return ErrUnsupported }

// WatchDesktopEscape is Windows's.
func WatchDesktopEscape(func()) (func(), error) { return nil, ErrUnsupported }

// GlobalRequests is Windows's registry value.
func GlobalRequests() *uint32 { return nil }

// SetGlobalRequests is Windows's registry value.
func SetGlobalRequests(bool) error { return ErrUnsupported }

// GlobalRequestsKey is Windows's.
const GlobalRequestsKey = ""

// ProcessSlack is Linux's.
func ProcessSlack(int) (int64, error) { return 0, ErrUnsupported }

// SetProcessSlack is Linux's.
func SetProcessSlack(int, int64) error { return ErrUnsupported }

// StartupHolder: this OS has none that tickscope installs.
func StartupHolder() Startup { return nil }
