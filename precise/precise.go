// Package precise sleeps to a deadline more precisely than the OS's timers
// can, and ticks on an absolute schedule that does not drift.
//
// Use Sleep, SleepUntil or SleepContext where time.Sleep would wake too
// late, and NewTicker for a periodic loop (a control loop, an audio or game
// frame) that must keep its rate however long each iteration's work takes:
//
//	ticker := precise.NewTicker(time.Millisecond) // 1 kHz
//	defer ticker.Stop()
//	for ticker.Wait() {
//		// ... read sensors, compute, actuate ...
//	}
//
// A wait never returns early. It sleeps on the OS's best native timer until
// a margin before the deadline, then spins on the high-resolution clock for
// the rest, so it costs some CPU: the margin follows the 99th percentile of
// the native timer's lateness on this machine and never exceeds
// spin_sleep's fixed margin (125 µs on Linux, 700 µs on Windows). Options
// change the trade: WithTail spins more for fewer late ticks, WithMargin
// keeps a fixed margin, and WithMissed(SkipLate) skips a tick already due
// instead of delivering it late. Stats says the margin in use and what the
// spinning costs. How the margin adapts is in margin.go; how it compares
// with other ways of keeping a period, measured, is in the repository's
// BENCHMARKS.md ("Periodic loops").
//
// The native timer is, on Linux, clock_nanosleep on an absolute
// CLOCK_MONOTONIC deadline from a thread whose timer slack is 1 ns; on
// Windows a high-resolution waitable timer (Windows 10 1803+), timed with
// QueryPerformanceCounter, falling back to a 1 ms timeBeginPeriod request
// where that timer does not exist; elsewhere Go's time.Sleep.
//
// Hold requests a Windows timer period for the process. Windows keeps one
// request per process, so every Hold in the process shares that one
// request: nested holds share it, the finest period held is the one in
// force, and only the last release withdraws it.
package precise

import (
	"context"
	"math"
	"sync"
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
	if !waitUntil(cal, deadlineAfter(d), ctx.Done(), nil, nil) {
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
// does. What the wait leaves to learn goes to left (see spinUntil).
func waitUntil(p *marginPolicy, deadline int64, done <-chan struct{}, abort func() bool, left *finishedWait) bool {
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
	return spinUntil(p, deadline, abort, left)
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
// with the margin policy p, and reports whether it did (see spinUntil).
func sleepUntil(p *marginPolicy, deadline int64, abort func() bool) bool {
	return spinUntil(p, deadline, abort, nil)
}

// spinUntil waits until the clock reads deadline (ns on now's clock),
// with the margin policy p. Nothing but the spin's own clock reads stands
// between the deadline and the return: what the wait leaves to learn (its
// wake-up's lateness, its figures for Stats) goes to left, or when left is
// nil to the finished waits, and is learned by the next wait that has time
// to spare before its deadline, or by Stats.
//
// A non-nil abort is checked just before the native sleep and on every
// turn of the spin: when it reports true, spinUntil returns false at
// once (before the deadline). The native sleep itself cannot be
// interrupted: an abort arriving during it is seen when it ends. It
// reports true when it waited until the deadline.
func spinUntil(p *marginPolicy, deadline int64, abort func() bool, left *finishedWait) bool {
	start := now()
	if deadline-start > p.margin() {
		finished.learn()
	}
	margin := p.margin()
	slept, late := false, int64(0)
	// The clock is read again: learning took some of the time to spare,
	// and a native sleep to a wake-up already past would teach the policy
	// a lateness the timer never had.
	if wake := deadline - margin; wake-now() > 0 {
		if abort != nil && abort() {
			return false
		}
		nativewait.BestSleepUntil(wake)
		slept, late = true, now()-wake
	}
	// The record is written before the spin, so that after it the return
	// touches only memory the spin kept warm: a cache miss there (the
	// native sleep lets other work run on this CPU) costs the deadline
	// about 0.1 µs.
	var own finishedWait
	record := left
	if record == nil {
		record = &own
	}
	*record = finishedWait{policy: p, start: start, margin: margin, late: late, slept: slept}
	ok := true
	end := now()
	record.spinStart = end
	for end < deadline {
		if abort != nil && abort() {
			ok = false
			break
		}
		end = now()
	}
	record.end = end
	if left == nil {
		finished.add(own)
	}
	return ok
}

// finishedWait is what a wait leaves to learn once it has returned.
type finishedWait struct {
	policy                *marginPolicy
	start, spinStart, end int64 // on now's clock
	margin                int64 // the margin the wait slept to
	late                  int64 // the native wake-up's lateness, when slept
	slept                 bool
}

// finishedWaits holds the waits that have returned and not yet been
// learned from: a wait adds its own after its spin, at the cost of an
// uncontended lock, and the next wait with time to spare before its
// deadline learns them all, so that the policy's bookkeeping never delays
// a deadline. When it is full, the wait that fills it learns them itself.
type finishedWaits struct {
	mu    sync.Mutex
	n     atomic.Int32 // how many are in waits, read without the lock
	waits [64]finishedWait
}

var finished finishedWaits

func (f *finishedWaits) add(w finishedWait) {
	f.mu.Lock()
	n := int(f.n.Load())
	f.waits[n] = w
	f.n.Store(int32(n + 1))
	full := n+1 == len(f.waits)
	f.mu.Unlock()
	if full {
		f.learn()
	}
}

// learn records the finished waits' figures and has each policy observe
// its wake-up's lateness.
func (f *finishedWaits) learn() {
	if f.n.Load() == 0 {
		return
	}
	var waits [len(f.waits)]finishedWait
	f.mu.Lock()
	n := copy(waits[:], f.waits[:f.n.Load()])
	clear(f.waits[:n]) // drop the policies, which a stopped Ticker's may be
	f.n.Store(0)
	f.mu.Unlock()
	for _, w := range waits[:n] {
		stats.record(w.end-w.start, w.end-w.spinStart)
		if w.slept {
			w.policy.observeWake(w.late, w.margin)
		}
	}
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

// Stats reports the margin in use and the cost of the waits so far: every
// wait that has returned, except a Ticker's latest, which is counted when
// its next Wait begins.
func Stats() Statistics {
	finished.learn()
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
