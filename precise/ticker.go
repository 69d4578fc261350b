package precise

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// MissedPolicy says what a Ticker does when it falls behind its schedule,
// because the work between ticks overran or the machine stalled.
type MissedPolicy int

const (
	// Skip drops the ticks that were missed and keeps to the schedule: the
	// next tick is the next one due. The default, as time.Ticker does.
	Skip MissedPolicy = iota
	// Delay restarts the schedule one period after the late tick.
	Delay
	// Burst delivers the missed ticks back to back until it has caught up.
	Burst
	// SkipLate never delivers a tick late because Wait was called late: a
	// tick already due when Wait is called, however little, is skipped, and
	// Wait waits for the next one still ahead, as a measurement loop does
	// (tickscope's, and cyclictest's). A loop whose work overruns a period by
	// a µs loses every other tick; one that keeps within its period has no
	// tick made late by the one before (BENCHMARKS.md replays both).
	SkipLate
)

// Option configures a Ticker.
type Option func(*Ticker)

// WithMissed sets the missed-tick policy.
func WithMissed(p MissedPolicy) Option { return func(t *Ticker) { t.missedPolicy = p } }

// WithTail makes the ticker's margin cover quantile q (0.5 to 0.9999) of
// the native timer's recent lateness, up to the OS's largest margin (500
// µs on Linux, 4 ms on Windows), instead of the default: the 99th
// percentile, never more than spin_sleep's fixed margin. A q above 0.99
// buys fewer late ticks where the native timer's tail is heavy with more
// spinning: on the replayed traces recorded on this project's shared
// virtual machine WithTail(0.999) had a median p99 lateness of 0 where the
// default had 298 µs, at 4.9 × the spin (BENCHMARKS.md). The ticker then
// keeps a margin of its own.
func WithTail(q float64) Option {
	return func(t *Ticker) { t.margins = newMarginPolicy(q, maxMargin, calWindow) }
}

// WithMargin gives the ticker a fixed margin of d (0 or more) instead of
// a learned one: it sleeps natively until d before each tick and spins
// the rest, as spin_sleep's SpinSleeper does with its accuracy. The native
// timer's lateness past d makes a tick late; d past it is spent spinning.
// WithMargin(125 * time.Microsecond) on Linux is spin_sleep's hybrid, the
// fixed margin the default policy is judged against (BENCHMARKS.md).
func WithMargin(d time.Duration) Option {
	return func(t *Ticker) { t.margins = newFixedPolicy(max(int64(d), 0)) }
}

// WithContext stops the ticker when ctx is done, as Stop does.
func WithContext(ctx context.Context) Option { return func(t *Ticker) { t.ctx = ctx } }

// Ticker keeps a loop on an absolute schedule: tick k is due at start +
// k × period whatever the work between ticks takes, so the loop does not
// drift. The loop calls Wait, which returns at the next tick on the
// caller's own goroutine: a channel would add a goroutine hand-off, tens
// of µs, to every tick.
//
//	t := precise.NewTicker(time.Millisecond, precise.WithContext(ctx))
//	defer t.Stop()
//	for t.Wait() {
//		work()
//	}
//
// Stop and Reset may be called from any goroutine, also while Wait
// sleeps.
type Ticker struct {
	mu     sync.Mutex
	next   int64 // due time of the next tick, on now's clock
	period int64
	resets atomic.Uint64 // counts Resets (written under mu), so a sleeping Wait sees one
	wake   chan struct{} // tells a sleeping Wait of a Reset

	missedPolicy MissedPolicy
	margins      *marginPolicy
	ctx          context.Context
	stopCtx      func() bool // under mu: Stop may run on the context's goroutine
	stopOnce     sync.Once
	done         chan struct{}
	stopped      atomic.Bool
	missed       atomic.Uint64
	// left is what the last Wait left to learn, handed to the finished
	// waits when the next Wait begins, so that even the lock that takes
	// is after the tick; only Wait's goroutine touches it.
	left finishedWait
}

// NewTicker returns a Ticker whose first tick is due one period from now.
// It panics if period is not positive, as time.NewTicker does.
func NewTicker(period time.Duration, opts ...Option) *Ticker {
	if period <= 0 {
		panic("precise: non-positive period for NewTicker")
	}
	t := &Ticker{period: int64(period), margins: cal, done: make(chan struct{}), wake: make(chan struct{}, 1)}
	for _, opt := range opts {
		opt(t)
	}
	t.next = deadlineAfter(period)
	if t.ctx != nil {
		if t.ctx.Err() != nil {
			t.Stop()
		} else {
			// AfterFunc may run Stop on another goroutine before it
			// returns: Stop reads stopCtx under mu.
			stop := context.AfterFunc(t.ctx, t.Stop)
			t.mu.Lock()
			t.stopCtx = stop
			t.mu.Unlock()
		}
	}
	return t
}

// Wait blocks until the next tick is due and reports whether the ticker is
// still running: false, at once, after Stop or when the ticker's context
// is done, also when that happens while Wait sleeps. A Wait sleeps on a Go
// timer, which Stop, the context and Reset interrupt, until about 2 ms
// before its tick (5 ms on Windows), then on the OS's native timer until
// the margin before the tick, then spins. Stop and Reset are checked just
// before the native sleep and throughout the spin; one arriving during the
// native sleep (at most those 2 or 5 ms) takes effect when that sleep
// ends: Wait then returns false after a Stop, and after a Reset waits for
// the new schedule's tick, returning at once if that is already due,
// without counting missed ticks.
//
// When the caller's work overruns, Wait follows the ticker's MissedPolicy:
// with Skip (the default) a Wait called more than a period late returns at
// once for the tick that is due and drops the ones missed, so the next is
// again on the schedule; Delay returns at once and starts the schedule
// afresh from now; Burst returns at once for every missed tick until the
// loop has caught up. Missed counts them. With these three a Wait called
// less than a period late returns at once and keeps the schedule: the loop
// is late by that much for that tick only. SkipLate instead skips every
// tick already due when Wait is called and waits for the next.
//
// Wait is for one goroutine at a time.
func (t *Ticker) Wait() bool {
	if t.left.policy != nil {
		finished.add(t.left)
		t.left = finishedWait{}
	}
	resetSeen := false // a Reset arrived while this Wait slept
	for {
		if t.isStopped() {
			return false
		}
		select {
		case <-t.wake: // a Reset before this point is in due below
		default:
		}
		t.mu.Lock()
		current := now()
		switch {
		case resetSeen:
			// The Reset came while this Wait could not see it: the ticks
			// its schedule had due since are not the loop's overrun. Take
			// the one due now, count none.
			if t.next <= current-t.period {
				t.next += (current - t.next) / t.period * t.period
			}
		case t.missedPolicy == SkipLate:
			if t.next <= current {
				behind := (current-t.next)/t.period + 1
				t.missed.Add(uint64(behind))
				t.next += behind * t.period
			}
		case t.next <= current-t.period:
			// More than a whole period behind: the work overran.
			behind := (current - t.next) / t.period
			switch t.missedPolicy {
			case Skip:
				t.missed.Add(uint64(behind))
				t.next += behind * t.period
			case Delay:
				t.missed.Add(1)
				t.next = current
			case Burst:
				t.missed.Add(1)
			}
		}
		due, resets := t.next, t.resets.Load()
		t.mu.Unlock()
		if waitHook != nil {
			waitHook()
		}
		if !t.waitFor(due, resets) {
			if t.isStopped() {
				return false
			}
			resetSeen = true
			continue // a Reset moved the tick: wait for the new one
		}
		t.mu.Lock()
		if t.resets.Load() != resets {
			t.mu.Unlock()
			resetSeen = true
			continue
		}
		t.next = due + t.period
		t.mu.Unlock()
		return !t.isStopped()
	}
}

// waitHook, when a test sets it, runs as Wait begins to wait for a tick it
// has read: a test that must act during the wait (a Reset while Wait
// sleeps) starts from it, where a goroutine of its own could not tell a
// Wait that was preempted before it read the schedule from one that sleeps.
var waitHook func()

// isStopped reports whether Stop was called or the ticker's context is
// done (which runs Stop, but on another goroutine, maybe not yet).
func (t *Ticker) isStopped() bool {
	return t.stopped.Load() || (t.ctx != nil && t.ctx.Err() != nil)
}

// waitFor waits until due unless the ticker stops or is reset (past
// Reset number resets) first.
func (t *Ticker) waitFor(due int64, resets uint64) bool {
	if coarse := due - now() - int64(interruptible); coarse > 0 {
		timer := time.NewTimer(time.Duration(coarse))
		select {
		case <-t.done:
			timer.Stop()
			return false
		case <-t.wake:
			timer.Stop()
			return false
		case <-timer.C:
		}
	}
	return waitUntil(t.margins, due, t.done, func() bool {
		return t.stopped.Load() || t.resets.Load() != resets
	}, &t.left)
}

// Reset changes the ticker's period to d and restarts its schedule: the
// next tick is due d from now, as with time.Ticker.Reset. A Wait sleeping
// meanwhile waits for the new tick instead. It panics if d is not
// positive. A stopped ticker stays stopped.
func (t *Ticker) Reset(d time.Duration) {
	if d <= 0 {
		panic("precise: non-positive period for Ticker.Reset")
	}
	t.mu.Lock()
	t.period = int64(d)
	t.next = deadlineAfter(d)
	t.resets.Add(1)
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// Stop turns the ticker off: Wait returns false from then on, and a Wait
// sleeping now returns false too, at once unless it is in its native sleep
// (Wait's doc), in which case when that sleep ends. It may be called from
// any goroutine, and more than once.
func (t *Ticker) Stop() {
	t.stopOnce.Do(func() {
		t.stopped.Store(true)
		close(t.done)
		t.mu.Lock()
		stop := t.stopCtx
		t.mu.Unlock()
		if stop != nil {
			stop()
		}
	})
}

// Missed counts the ticks skipped (Skip, SkipLate), rescheduled (Delay) or
// delivered more than a period late (Burst).
func (t *Ticker) Missed() uint64 { return t.missed.Load() }

// Due is when the next tick is due, as a duration from now (negative when
// it is late already).
func (t *Ticker) Due() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return time.Duration(t.next - now())
}

// Margin is the time before a tick at which the ticker's native sleep now
// hands over to the spin: the package's (Stats().Margin) unless WithTail
// or WithMargin gave the ticker its own.
func (t *Ticker) Margin() time.Duration { return time.Duration(t.margins.margin()) }
