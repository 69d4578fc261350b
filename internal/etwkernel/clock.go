package etwkernel

import (
	"errors"
	"math"
	"math/bits"
	"time"
)

// ErrClock is a QPC frequency or a span that cannot be converted.
var ErrClock = errors.New("not a usable QPC frequency or span")

// toDuration converts a non-negative span of QPC ticks at freq counts a
// second to a duration, rounding down; a span past time.Duration's range
// is the largest duration.
func toDuration(ticks, freq int64) time.Duration {
	if ticks <= 0 || freq <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(ticks), uint64(time.Second))
	if hi >= uint64(freq) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, uint64(freq))
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(q)
}

// toTicks converts a non-negative duration to QPC ticks, rounding up (a
// deadline is never early).
func toTicks(d time.Duration, freq int64) (int64, error) {
	if d < 0 || freq <= 0 {
		return 0, ErrClock
	}
	hi, lo := bits.Mul64(uint64(d), uint64(freq))
	if hi >= uint64(time.Second) {
		return 0, ErrClock
	}
	q, r := bits.Div64(hi, lo, uint64(time.Second))
	if r != 0 {
		q++
	}
	if q > math.MaxInt64 {
		return 0, ErrClock
	}
	return int64(q), nil
}

// TickTimes are the clock's ticks from phase on, every period, that fall
// in [from, to] (QPC ticks at freq): the tick model's input when the
// period in force and one tick's time are known. Tick k is at
// phase + k·period rounded to the nearest QPC tick, so that a period that
// is not a whole number of QPC ticks does not drift.
func TickTimes(phase int64, period time.Duration, freq, from, to int64) ([]int64, error) {
	if period <= 0 || freq <= 0 || to < from {
		return nil, ErrClock
	}
	// k·period·freq/1e9 in 128 bits: k is bounded by the span.
	at := func(k uint64) (int64, bool) {
		hi, lo := bits.Mul64(k, uint64(period))
		if hi != 0 {
			return 0, false
		}
		hi, lo = bits.Mul64(lo, uint64(freq))
		if hi >= uint64(time.Second) {
			return 0, false
		}
		q, r := bits.Div64(hi, lo, uint64(time.Second))
		if 2*r >= uint64(time.Second) {
			q++
		}
		if q > math.MaxInt64-uint64(max(phase, 0)) {
			return 0, false
		}
		return phase + int64(q), true
	}
	var k uint64
	if from > phase {
		// Start just before from: k = floor((from-phase)·1e9 / (period·freq)).
		span := toDuration(from-phase, freq)
		k = uint64(span / period)
		if k > 0 {
			k--
		}
	}
	const maxTicks = 1 << 20
	var out []int64
	for n := 0; n < maxTicks+2; n++ {
		t, ok := at(k)
		if !ok || t > to {
			break
		}
		if t >= from {
			out = append(out, t)
			if len(out) > maxTicks {
				return nil, ErrClock
			}
		}
		k++
	}
	return out, nil
}
