// Package precise sleeps to a deadline more precisely than the OS's timers
// can, and ticks on an absolute schedule that does not drift.
//
// A wait sleeps on the OS's best native timer until a margin before the
// deadline, then spins on the high-resolution clock for the rest, and never
// returns early. The margin is not a fixed guess: it is calibrated from the
// lateness the native timer actually shows on this machine, adapts when
// that changes, and stays within bounds. Stats reports the margin in use and
// what the spinning costs.
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
	"slices"
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
	sleepUntil(now() + int64(d))
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

// sleepUntil waits until the clock reads deadline (ns on now's clock).
func sleepUntil(deadline int64) {
	start := now()
	margin := cal.margin()
	if wake := deadline - margin; wake-start > 0 {
		nativewait.BestSleepUntil(wake)
		cal.observe(now() - wake)
	}
	spinStart := now()
	for now() < deadline {
	}
	end := now()
	stats.record(end-start, end-spinStart)
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

// calibrator keeps the margin at a high quantile of the native timer's
// recent lateness, with headroom, within [minMargin, maxMargin].
type calibrator struct {
	mu      sync.Mutex
	window  [calWindow]int64
	scratch [calWindow]int64 // sorted copy, reused: a wait allocates nothing
	n, next int
	current atomic.Int64
}

const (
	// calWindow is how many recent wake-ups the margin follows: enough for
	// a 97th percentile that ignores the rare host stall no margin should
	// chase, few enough to adapt within a second at 1 kHz.
	calWindow = 512
	// calMinSamples is how many wake-ups are seen before the margin moves
	// from its starting value.
	calMinSamples = 16
	// calEvery is how often (in wake-ups) the quantile is recomputed: a
	// sort of the window costs microseconds, which every wait would pay.
	calEvery = 8
	// minMargin keeps a spin long enough to absorb the wake-up's own
	// jitter; headroom is added to the observed quantile for the same reason.
	minMargin = int64(10 * time.Microsecond)
	headroom  = int64(5 * time.Microsecond)
	// initialMargin (spin_sleep's default accuracy on Linux and Windows)
	// and maxMargin are the native timer's, from package nativewait.
	initialMargin = int64(nativewait.InitialMargin)
	maxMargin     = int64(nativewait.MaxMargin)
)

var cal = newCalibrator()

func newCalibrator() *calibrator {
	c := &calibrator{}
	c.current.Store(initialMargin)
	return c
}

func (c *calibrator) margin() int64 { return c.current.Load() }

// observe records how late the native timer woke (ns; negative is early)
// and moves the margin to the window's 97th percentile plus a quarter and
// the headroom.
func (c *calibrator) observe(late int64) {
	late = max(late, 0)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.window[c.next] = late
	c.next = (c.next + 1) % calWindow
	c.n = min(c.n+1, calWindow)
	if c.n < calMinSamples || c.next%calEvery != 0 {
		return
	}
	recent := c.scratch[:c.n]
	copy(recent, c.window[:c.n])
	slices.Sort(recent)
	q := recent[(len(recent)*97+99)/100-1]
	c.current.Store(min(max(q+q/4+headroom, minMargin), maxMargin))
}
