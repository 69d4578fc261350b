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
