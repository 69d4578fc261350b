// Package precise sleeps to a deadline more precisely than the OS's timers
// can, and ticks on an absolute schedule that does not drift.
//
// A wait sleeps on the OS's best native timer until a margin before the
// deadline, then spins on the high-resolution clock for the rest, and never
// returns early. The margin is not a fixed guess: it covers the 99th
// percentile of the lateness the native timer shows on this machine, adapts
// when that changes, and never exceeds spin_sleep's fixed margin (125 µs on
// Linux, 700 µs on Windows), which it takes while the timer's 99.8th
// percentile reaches it. It keeps the fixed margin until it has seen a
// thousand wake-ups, and covers a late wake-up from the next wait on.
// Replayed on recorded and synthetic traces of the native timer
// (BENCHMARKS.md), whole and as 3 s runs from a fresh start, its p99 was
// never more than a µs worse than spin_sleep's hybrid's, it never spun
// more, and it spun about a fifth as much on a quiet bare-metal machine's.
// WithTail trades more spinning for fewer late ticks. Stats reports the
// margin in use and what the spinning costs.
//
// The native timer is, on Linux, clock_nanosleep on an absolute
// CLOCK_MONOTONIC deadline from a thread whose timer slack is 1 ns; on
// Windows a high-resolution waitable timer (Windows 10 1803+), timed with
// QueryPerformanceCounter, falling back to a 1 ms timeBeginPeriod request
// where that timer does not exist; elsewhere Go's time.Sleep.
//
// Hold requests a Windows timer period for the process. Windows keeps one
// request per process, so Hold makes that one request for every Hold in
// the process: nested holds share it, the finest period held is the one in
// force, and only the last release withdraws it.
package precise

import (
	"context"
	"math"
	"sync/atomic"
	"time"

	"github.com/tickscope/tickscope/internal/nativewait"
)

// Sleep pauses the calling goroutine for at least d. A zero or negative d
// returns at once.
func Sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	sleepUntil(cal, deadlineAfter(d), nil)
}

// deadlineAfter is now()+d on now's clock, saturated at math.MaxInt64 so
// that a huge d (math.MaxInt64, say) waits as long as it can instead of
// wrapping to a deadline in the past.
func deadlineAfter(d time.Duration) int64 {
	n := now()
	if n > 0 && int64(d) > math.MaxInt64-n {
		return math.MaxInt64
	}
	return n + int64(d)
}

// SleepContext pauses the calling goroutine for at least d, or until ctx
// is done, whichever comes first: nil after a full wait, ctx.Err() when
// ctx ended it (a ctx done already returns at once). The wait up to
// about 2 ms before its end (5 ms on Windows) is on a Go timer, which ctx
// interrupts; the rest (the native sleep and the spin) is not, so a cancellation
// arriving then is reported only if the wait had not finished.
func SleepContext(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	if !waitUntil(cal, deadlineAfter(d), ctx.Done(), nil) {
		return ctx.Err()
	}
	return nil
}

// interruptible is how long before its deadline a wait that can be
// interrupted stops waiting on a Go timer (which the interruption can end)
// and goes to the native sleep and the spin (which it cannot): more than
// any margin the policy chooses (4 ms at most on Windows: there the
// native timer's last part is the margin itself) plus the Go timer's own
// lateness in a quiet process.
const interruptible = max(2*time.Millisecond, time.Duration(maxMargin)+time.Millisecond)

// waitUntil waits until deadline with policy p unless done is closed
// first (or abort, when not nil, reports true: see sleepUntil), and
// reports whether it waited the whole way. A nil done waits as sleepUntil
// does.
func waitUntil(p *marginPolicy, deadline int64, done <-chan struct{}, abort func() bool) bool {
	if done != nil {
		if coarse := deadline - now() - int64(interruptible); coarse > 0 {
			timer := time.NewTimer(time.Duration(coarse))
			select {
			case <-done:
				timer.Stop()
				return false
			case <-timer.C:
			}
		}
		select {
		case <-done:
			return false
		default:
		}
	}
	return sleepUntil(p, deadline, abort)
}

// SleepUntil pauses the calling goroutine until t. A t in the past returns
// at once. The deadline is read against Go's clock, which on Windows moves
// with the timer interrupt: there the wait can end up to one interrupt
// period late (never early), so use Sleep or a Ticker for sub-tick
// precision.
func SleepUntil(t time.Time) {
	Sleep(time.Until(t))
}

// now reads the high-resolution clock the waits spin on: CLOCK_MONOTONIC
// on Linux (clock_nanosleep's), QueryPerformanceCounter on Windows (Go's
// own clock there moves with the timer interrupt, too coarsely to spin on),
// Go's monotonic clock elsewhere.
func now() int64 { return nativewait.Now() }

// sleepUntil waits until the clock reads deadline (ns on now's clock),
// with the margin policy p. The policy learns from the wake-up after the
// spin, so its bookkeeping never eats into the margin.
//
// A non-nil abort is checked just before the native sleep and on every
// turn of the spin: when it reports true, sleepUntil returns false at
// once (before the deadline). The native sleep itself cannot be
// interrupted: an abort arriving during it is seen when it ends. It
// reports true when it waited until the deadline.
func sleepUntil(p *marginPolicy, deadline int64, abort func() bool) bool {
	start := now()
	margin := p.margin()
	slept, late := false, int64(0)
	if wake := deadline - margin; wake-start > 0 {
		if abort != nil && abort() {
			return false
		}
		nativewait.BestSleepUntil(wake)
		slept, late = true, now()-wake
	}
	spinStart := now()
	ok := true
	for now() < deadline {
		if abort != nil && abort() {
			ok = false
			break
		}
	}
	end := now()
	stats.record(end-start, end-spinStart)
	if slept {
		p.observe(late)
	}
	return ok
}

// Statistics describe the waits made so far in this process.
type Statistics struct {
	// Margin is the time before a deadline at which the native sleep now
	// hands over to the spin.
	Margin time.Duration
	// Waits is the number of waits, Waited their total duration, Spun the
	// part of it spent spinning: the CPU the precision costs.
	Waits  uint64
	Waited time.Duration
	Spun   time.Duration
	// SpinShare is Spun / Waited: the share of a CPU the waits kept busy.
	SpinShare float64
}

// Stats reports the margin in use and the cost of the waits so far.
func Stats() Statistics {
	s := Statistics{
		Margin: time.Duration(cal.margin()),
		Waits:  stats.waits.Load(),
		Waited: time.Duration(stats.waited.Load()),
		Spun:   time.Duration(stats.spun.Load()),
	}
	if s.Waited > 0 {
		s.SpinShare = float64(s.Spun) / float64(s.Waited)
	}
	return s
}

type waitStats struct {
	waits        atomic.Uint64
	waited, spun atomic.Int64
}

func (s *waitStats) record(waited, spun int64) {
	s.waits.Add(1)
	s.waited.Add(waited)
	s.spun.Add(spun)
}

var stats waitStats

// cal is the default margin policy, shared by Sleep, SleepContext and every
// Ticker without WithTail.
var cal = newDefaultPolicy(min(initialMargin, maxMargin))
