package precise

import (
	"sync"
	"sync/atomic"
	"time"
)

// MissedPolicy says what a Ticker does when it falls behind its schedule,
// because the receiver was busy or the machine stalled.
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

// Ticker delivers ticks on an absolute schedule: tick k is due at start +
// k × period whatever the work between ticks takes, so it does not drift.
type Ticker struct {
	// C delivers each tick, stamped with the time it fell due. It holds one
	// tick: while the receiver is busy the next waits there, and the ones
	// after it are handled by the missed-tick policy.
	C <-chan time.Time

	c       chan time.Time
	period  int64
	policy  MissedPolicy
	stop    chan struct{}
	stopped sync.Once
	missed  atomic.Uint64
}

// NewTicker returns a Ticker with the given period. It panics if period is
// not positive, as time.NewTicker does.
func NewTicker(period time.Duration, opts ...Option) *Ticker {
	if period <= 0 {
		panic("precise: non-positive period for NewTicker")
	}
	c := make(chan time.Time, 1)
	t := &Ticker{C: c, c: c, period: int64(period), stop: make(chan struct{})}
	for _, opt := range opts {
		opt(t)
	}
	go t.run(now() + t.period)
	return t
}

// Stop turns the ticker off: no tick is delivered after it returns, except
// one that was already waiting in C.
func (t *Ticker) Stop() { t.stopped.Do(func() { close(t.stop) }) }

// Missed counts the ticks skipped (Skip), rescheduled (Delay) or delivered
// more than a period late (Burst).
func (t *Ticker) Missed() uint64 { return t.missed.Load() }

func (t *Ticker) run(next int64) {
	for {
		sleepUntil(next)
		select {
		case <-t.stop:
			return
		default:
		}
		select {
		case t.c <- time.Now():
		case <-t.stop:
			return
		}
		current := now()
		next += t.period
		if next > current {
			continue
		}
		behind := uint64((current-next)/t.period) + 1
		switch t.policy {
		case Skip:
			t.missed.Add(behind)
			next += int64(behind) * t.period
		case Delay:
			t.missed.Add(1)
			next = current + t.period
		case Burst:
			t.missed.Add(1)
		}
	}
}
