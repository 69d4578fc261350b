package precise_test

import (
	"fmt"
	"time"

	"github.com/tickscope/tickscope/precise"
)

// A 1 kHz control loop: each iteration starts on the absolute schedule, so
// the loop keeps its rate however long the work takes, and a late start
// skips the ticks it missed instead of bursting to catch up.
func ExampleNewTicker() {
	ticker := precise.NewTicker(time.Millisecond)
	defer ticker.Stop()
	for i := 0; i < 100 && ticker.Wait(); i++ {
		// ... read sensors, compute, actuate ...
	}
	fmt.Println("ticks missed because the work overran:", ticker.Missed())
}

// Sleep waits at least the duration asked for, to within a few µs on a
// machine whose native timer is only accurate to tens or hundreds.
func ExampleSleep() {
	for i := 0; i < 5; i++ {
		precise.Sleep(1500 * time.Microsecond)
		// ... a step that must start 1.5 ms after the last one ended ...
	}
}

// Stats shows what the precision costs: the margin the native sleep hands
// over at, and the share of the waiting spent spinning on a CPU.
func ExampleStats() {
	for i := 0; i < 10; i++ {
		precise.Sleep(time.Millisecond)
	}
	s := precise.Stats()
	fmt.Println(s.Waits >= 10, s.Margin > 0)
	// Output: true true
}
