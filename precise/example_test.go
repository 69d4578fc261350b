package precise_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tickscope/tickscope/precise"
)

// A 1 kHz control loop: each iteration starts on the absolute schedule, so
// the loop keeps its rate however long the work takes, and a late start
// skips the ticks it missed instead of bursting to catch up (Missed counts
// them).
func ExampleNewTicker() {
	ticker := precise.NewTicker(time.Millisecond)
	defer ticker.Stop()
	ticks := 0
	for ticks < 100 && ticker.Wait() {
		ticks++
		// ... read sensors, compute, actuate ...
	}
	fmt.Println("ticks:", ticks)
	// Output: ticks: 100
}

// Sleep waits at least the duration asked for, to within a few µs on a
// machine whose native timer is only accurate to tens or hundreds.
func ExampleSleep() {
	before := precise.Stats().Waits
	for i := 0; i < 5; i++ {
		precise.Sleep(1500 * time.Microsecond)
		// ... a step that must start 1.5 ms after the last one ended ...
	}
	fmt.Println("waits:", precise.Stats().Waits-before)
	// Output: waits: 5
}

// SleepContext is Sleep that a context can end: here a deadline ends an
// hour's wait.
func ExampleSleepContext() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := precise.SleepContext(ctx, time.Hour)
	fmt.Println(errors.Is(err, context.DeadlineExceeded))
	// Output: true
}

// A loop that a context stops: Wait returns false once the context is
// done, also while it sleeps. Wait checks the context itself, so the
// Wait after cancel returns false whatever the scheduler does with the
// goroutine that runs the ticker's Stop.
func ExampleWithContext() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ticker := precise.NewTicker(time.Millisecond, precise.WithContext(ctx))
	defer ticker.Stop()
	ticks := 0
	for ticker.Wait() {
		ticks++
		if ticks == 10 {
			cancel() // e.g. the user pressed stop
		}
	}
	fmt.Println("stopped after", ticks, "ticks")
	// Output: stopped after 10 ticks
}

// Reset changes the period: the next tick is due one new period from the
// Reset, and the schedule continues from there.
func ExampleTicker_Reset() {
	ticker := precise.NewTicker(time.Millisecond)
	defer ticker.Stop()
	for i := 0; i < 5; i++ {
		ticker.Wait()
	}
	ticker.Reset(2 * time.Millisecond)
	fmt.Println("next tick within the new period:", ticker.Due() <= 2*time.Millisecond)
	ticks := 0
	for ticks < 5 && ticker.Wait() {
		ticks++
	}
	fmt.Println("ticks at the new period:", ticks)
	// Output:
	// next tick within the new period: true
	// ticks at the new period: 5
}

// WithTail trades CPU for fewer late ticks: this ticker's margin covers
// the native timer's 99.9th percentile of lateness, beyond spin_sleep's
// fixed margin if the machine needs it (BENCHMARKS.md has the table).
func ExampleWithTail() {
	ticker := precise.NewTicker(time.Millisecond, precise.WithTail(0.999))
	defer ticker.Stop()
	for i := 0; i < 50 && ticker.Wait(); i++ {
	}
	fmt.Println(ticker.Margin() > 0)
	// Output: true
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

// A ticker with spin_sleep's fixed margin instead of a learned one: it
// sleeps natively until 125 µs before each tick, spins the rest, and
// keeps that margin whatever the native timer does.
func ExampleWithMargin() {
	ticker := precise.NewTicker(time.Millisecond, precise.WithMargin(125*time.Microsecond))
	defer ticker.Stop()
	for ticks := 0; ticks < 50 && ticker.Wait(); ticks++ {
		// ... the loop's work ...
	}
	fmt.Println("margin:", ticker.Margin())
	// Output: margin: 125µs
}

// SkipLate keeps a measurement loop's schedule: a tick already due when
// Wait is called, however little, is skipped rather than delivered late,
// and Missed counts it.
func ExampleSkipLate() {
	ticker := precise.NewTicker(2*time.Millisecond, precise.WithMissed(precise.SkipLate))
	defer ticker.Stop()
	time.Sleep(5 * time.Millisecond) // work overruns the ticks due at 2 and 4 ms
	ticker.Wait()                    // returns at the tick due at 6 ms (or later)
	fmt.Println(ticker.Missed() >= 2)
	// Output: true
}
