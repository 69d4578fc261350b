package precise

import (
	"fmt"
	"time"
)

// Hold requests a timer period for this process on Windows, and returns
// the release of the request; calling release again does nothing and
// returns nil. Outside Windows it requests nothing: Linux and macOS wake
// waits on high-resolution timers already (on Linux, Sleep sets the
// waiting thread's timer slack to 1 ns itself), and release returns nil.
//
// On Windows, Hold requests the period with NtSetTimerResolution and opts
// the process out of Windows 11's timer-resolution throttling, so that the
// request holds while its windows are hidden. Since Windows 10 2004 the
// request affects this process only. The kernel keeps one request per
// process, which every Hold shares: the finest period held is the one
// requested; when the hold of the finest is released the next finest is
// requested in its place, and the request is withdrawn when the last hold
// is released. release's error is that request's: one that fails means
// something else in the process (another library calling
// NtSetTimerResolution or timeEndPeriod) withdrew the request.
//
// A period under 100 ns (the call's unit), zero or negative included, is
// refused on every OS. On Windows builds without high-resolution waitable
// timers (before Windows 10 1803) the Go runtime calls timeEndPeriod(1)
// whenever the process idles, which would withdraw an NtSetTimerResolution
// request: there whole milliseconds are held with timeBeginPeriod, which
// survives it, and a finer period is refused with the reason.
func Hold(period time.Duration) (release func() error, err error) {
	if period < 100*time.Nanosecond {
		return nil, fmt.Errorf("precise.Hold(%v): the period must be at least 100ns", period)
	}
	release, err = hold(period)
	if err != nil {
		return nil, fmt.Errorf("precise.Hold(%v): %w", period, err)
	}
	return release, nil
}
