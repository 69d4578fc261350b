//go:build !windows

package precise

import "time"

// Hold is a no-op outside Windows, which alone has a process-wide timer
// period to request: Linux and macOS wake waits on high-resolution timers
// already (on Linux, Sleep sets the waiting thread's timer slack to 1 ns
// itself). release does nothing.
func Hold(period time.Duration) (release func(), err error) { return func() {}, nil }
