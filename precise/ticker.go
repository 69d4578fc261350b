package precise

import (
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
)

// Option configures a Ticker.
type Option func(*Ticker)

// WithMissed sets the missed-tick policy.
func WithMissed(p MissedPolicy) Option { return func(t *Ticker) { t.policy = p } }

// Ticker keeps a loop on an absolute schedule: tick k is due at start +
// k × period whatever the work between ticks takes, so the loop does not
// drift. The loop calls Wait, which returns at the next tick on the
// caller's own goroutine: a channel would add a goroutine hand-off, tens
// of µs, to every tick.
//
//	t := precise.NewTicker(time.Millisecond)
//	defer t.Stop()
//	for t.Wait() {
//		work()
//	}
type Ticker struct {
	next    int64 // due time of the next tick, on now's clock
	period  int64
	policy  MissedPolicy
	stopped atomic.Bool
	missed  atomic.Uint64
}

// NewTicker returns a Ticker whose first tick is due one period from now.
// It panics if period is not positive, as time.NewTicker does.
func NewTicker(period time.Duration, opts ...Option) *Ticker {
	if period <= 0 {
		panic("precise: non-positive period for NewTicker")
	}
	t := &Ticker{period: int64(period), next: now() + int64(period)}
	for _, opt := range opts {
		opt(t)
	}
	return t
}

// Wait blocks until the next tick is due and reports whether the ticker is
// still running. It is for one goroutine at a time.
func (t *Ticker) Wait() bool {
	if t.stopped.Load() {
		return false
	}
	current := now()
	if t.next <= current-t.period {
		// More than a whole period behind: the work overran.
		behind := (current - t.next) / t.period
		switch t.policy {
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
	sleepUntil(cal, t.next)
	t.next += t.period
	return !t.stopped.Load()
}

// Stop turns the ticker off: Wait returns false from then on (a Wait
// already sleeping finishes its sleep first). It may be called from any
// goroutine.
func (t *Ticker) Stop() { t.stopped.Store(true) }

// Missed counts the ticks skipped (Skip), rescheduled (Delay) or delivered
// more than a period late (Burst).
func (t *Ticker) Missed() uint64 { return t.missed.Load() }

// Due is when the next tick is due, as a duration from now (negative when
// it is late already).
func (t *Ticker) Due() time.Duration { return time.Duration(t.next - now()) }
