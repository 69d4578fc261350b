package platform

import "time"

// goSleepWaiter waits with Go's time.Sleep, the wait most Go programs use:
// it is on every OS's list so users can see what the runtime delivers.
type goSleepWaiter struct{ delay time.Duration }

func (w goSleepWaiter) Wait(int64) error { time.Sleep(w.delay); return nil }
func (goSleepWaiter) Close() error       { return nil }

var goMethod = Method{Name: "go", Summary: "Go's time.Sleep", Schedule: Relative}
