package platform

import "time"

// startKnown says whether a creation time read for a process can be its
// start: not before the machine booted (now less uptime, less a minute
// for the clocks' rounding), nor after now (plus that minute). A process
// whose creation time is neither is looked at again at the next scan,
// not taken by it. Under Wine, a process read in its first moments gave
// a creation time in 1795 and, a scan later, its real one: taken as its
// start, the first made the same process look like another that exited
// as it started (a run of .ci/run on 2026-12-03, apply_while.txtar).
func startKnown(created, now time.Time, uptime time.Duration) bool {
	boot := now.Add(-uptime)
	return !created.Before(boot.Add(-time.Minute)) && !created.After(now.Add(time.Minute))
}
