//go:build !windows

package precise

import (
	"fmt"
	"time"
)

// Hold is a no-op outside Windows, which alone has a process-wide timer
// period to request: Linux and macOS wake waits on high-resolution timers
// already (on Linux, Sleep sets the waiting thread's timer slack to 1 ns
// itself). A period of zero or less, or under 100 ns, is refused as on
// Windows; release does nothing.
func Hold(period time.Duration) (release func(), err error) {
	if period < 100*time.Nanosecond {
		return nil, fmt.Errorf("precise.Hold(%v): the period must be at least 100ns", period)
	}
	return func() {}, nil
}

// HoldReleaseError is always nil outside Windows: Hold requests nothing.
func HoldReleaseError() error { return nil }
