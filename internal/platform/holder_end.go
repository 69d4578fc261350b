//go:build linux || windows

package platform

import (
	"fmt"
	"time"
)

// endHolder ends a running startup holder: the process its record names,
// once it has passed mayEnd (endRecordedHolder, one per OS), then waits up
// to 2 s for its lock to be free, probing without taking it.
func endHolder() error {
	h, running := heldHolder()
	if !running {
		return nil
	}
	if h.PID == 0 {
		return fmt.Errorf("a holder runs but its record %s names no process", h.Record)
	}
	if err := endRecordedHolder(h); err != nil {
		return err
	}
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, running := heldHolder(); !running {
			return nil
		}
	}
	return fmt.Errorf("the holder (process %d) still runs 2 s after it was ended", h.PID)
}
