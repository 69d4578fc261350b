package precise

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tickscope/tickscope/internal/nativewait"
)

// The margin policy. A wait sleeps natively to deadline − margin and spins
// the rest: a native wake-up later than the margin makes the wait late by
// the difference, an earlier one costs the difference in spinning. The
// policy was chosen by replaying recorded and synthetic traces of the
// native timer's lateness, whole and cut into 1,500-wake-up runs (a 3 s
// loop at 500 Hz) each replayed from a fresh policy (policy_eval_test.go;
// the table is in BENCHMARKS.md). Every policy learns the same way:
//
//   - It starts at spin_sleep's fixed margin (nativewait.InitialMargin,
//     nativewait.SpinSleepMargin on Linux and Windows) and does not go
//     below it until it has seen a whole window of wake-ups (1,024): the
//     first version moved after 32, and a run that began in a quiet
//     moment then met the native timer's tail with a small margin: 3 s
//     runs replayed from its start were up to 15 µs worse at p99 than the
//     fixed margin's on the recorded 500 Hz timerfd trace, 13 µs on the
//     recorded busy one and 24 µs on bursts under the cap.
//   - It covers a quantile of the window's lateness, with headroom, and
//     also a peak that jumps to any wake-up's lateness (plus the headroom)
//     at once and decays by 1/32 a wake-up (a half-life of about 22): a
//     burst is covered from its first late wake-up, before the quantile,
//     which moves slowly, catches up; and a stall past the cap holds the
//     margin at the cap for about 32·ln(stall/cap) wake-ups (about 100
//     after a 3 ms stall at 125 µs), as stalls on a busy machine come in
//     clusters. A peak held at the cap instead let a run of the quiet
//     trace turning busy be 14 µs worse at p99 than the fixed margin.
//
// The default covers the 99th percentile, goes to the cap while the
// 99.8th percentile is at or above it, and never exceeds spin_sleep's
// fixed margin. Below that cap it spins only as much as the timer needs
// (on a quiet bare-metal trace about a fifth of the fixed margin's spin);
// at the cap it is the fixed margin. Its p99 lateness is within a µs of
// the fixed margin's on every trace and every run replayed (the traces it
// was chosen on: no held-out trace has been replayed), and its CPU
// never above it. WithTail(q) covers quantile q instead, up to
// nativewait.MaxMargin: fewer late wake-ups where the native timer's tail
// is heavy, at the cost of more spinning.
type marginPolicy struct {
	mu sync.Mutex
	// tail is the quantile of lateness covered, in parts per 10,000.
	tail int
	// guard (parts per 10,000; 0 for none) puts the margin at its limit
	// while that quantile of the window is at or above the limit: where
	// the tail reaches past the cap, a margin below it would only lose to
	// the fixed margin whenever the quantile lags a burst.
	guard int
	// limit is the largest margin the policy may choose.
	limit int64
	// window holds the last calWindow lateness values (ns, ≥ 0); counts is
	// their histogram, kept incrementally so a wait's bookkeeping costs a
	// scan of the buckets, never a sort.
	window  []int64
	counts  [histBuckets]uint16 // a window holds at most 1<<15 values
	n, next int
	// start is the margin the policy begins at; until warmup wake-ups
	// (at most the window's length) have been seen, the margin stays at
	// or above it.
	start  int64
	warmup int
	// peak jumps to a wake-up's lateness plus the headroom, also past
	// limit (the margin never is), and loses 1/2^peakShift of itself every
	// wake-up (0: no peak).
	peak      int64
	peakShift uint
	// fixed keeps the margin where it starts: WithMargin's.
	fixed   bool
	current atomic.Int64
}

const (
	// calWindow is how many recent wake-ups the margin follows: a second at
	// 1 kHz, enough that a 99th percentile rests on ten values.
	calWindow = 1024
	// calMinSamples is the smallest window, and how many wake-ups a policy
	// without a warm-up of its own (the evaluator's plain quantiles) sees
	// before its margin moves.
	calMinSamples = 32
	// peakShift is the peak's decay: 1/32 a wake-up, a half-life of about
	// 22 wake-ups. 1/64 spent 5 % more on the bare-metal trace and
	// gained nothing on any other trace; without a peak, a run of the
	// quiet trace turning busy was 14 µs worse at p99 than the fixed
	// margin.
	peakShift = 5
	// minMargin keeps a spin long enough to absorb the wake-up's own
	// jitter; headroom is added to the quantile for the same reason, and a
	// quarter of the quantile on top for a tail that grows between samples.
	minMargin = int64(10 * time.Microsecond)
	headroom  = int64(5 * time.Microsecond)
	// initialMargin (spin_sleep's default accuracy on Linux and Windows)
	// and maxMargin are the native timer's, from package nativewait.
	initialMargin = int64(nativewait.InitialMargin)
	maxMargin     = int64(nativewait.MaxMargin)
	// defaultGuard is the default's guard quantile (parts per 10,000):
	// p99.5 was not enough on the busy trace recorded here, p99.9 spent
	// twice as much on the quiet timerfd trace.
	defaultGuard = 9980
	// DefaultTail is the quantile of the native timer's lateness the
	// default policy covers.
	DefaultTail = 0.99
)

// newDefaultPolicy is the library's default within limit (spin_sleep's
// fixed margin): the 99th percentile, at the limit while the 99.8th
// percentile reaches it.
func newDefaultPolicy(limit int64) *marginPolicy {
	p := newMarginPolicy(DefaultTail, limit, calWindow)
	p.guard = defaultGuard
	return p
}

// newMarginPolicy covers quantile tail of the last window wake-ups, up to
// limit, learning as marginPolicy's doc says.
func newMarginPolicy(tail float64, limit int64, window int) *marginPolicy {
	p := &marginPolicy{tail: tailParts(tail), limit: limit, window: make([]int64, min(max(window, calMinSamples), 1<<15)), peakShift: peakShift}
	p.start = min(initialMargin, limit)
	p.warmup = len(p.window)
	p.current.Store(p.start)
	return p
}

// newFixedPolicy keeps the margin at m and learns nothing.
func newFixedPolicy(m int64) *marginPolicy {
	p := &marginPolicy{limit: m, start: m, fixed: true}
	p.current.Store(m)
	return p
}

// tailParts turns a quantile into parts per 10,000 within 50 %..99.99 %.
func tailParts(q float64) int {
	return min(max(int(q*10000+0.5), 5000), 9999)
}

func (p *marginPolicy) margin() int64 { return p.current.Load() }

// observe records how late the native timer woke (ns; negative is early)
// and moves the margin to the larger of the window's tail quantile (plus a
// quarter and the headroom) and the peak, within [minMargin, limit], and
// not below start during the warm-up.
func (p *marginPolicy) observe(late int64) {
	if p.fixed {
		return
	}
	late = max(late, 0)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == len(p.window) {
		p.counts[bucket(p.window[p.next])]--
	}
	p.window[p.next] = late
	p.counts[bucket(late)]++
	p.next = (p.next + 1) % len(p.window)
	p.n = min(p.n+1, len(p.window))
	if p.peakShift > 0 {
		p.peak = max(p.peak-p.peak>>p.peakShift, late+headroom)
	}
	if p.n < calMinSamples {
		return
	}
	if p.guard > 0 && p.quantile(p.guard) >= p.limit {
		p.current.Store(p.limit)
		return
	}
	q := p.quantile(p.tail)
	m := max(q+q/4+headroom, minMargin, p.peak)
	if p.n < p.warmup {
		m = max(m, p.start)
	}
	p.current.Store(min(m, p.limit))
}

// quantile is the window's quantile (parts per 10,000) read from the
// histogram: the top of its bucket, never below the true value.
func (p *marginPolicy) quantile(parts int) int64 {
	// The rank of the quantile, counted from the top.
	above := p.n * (10000 - parts) / 10000
	seen := 0
	for b := histBuckets - 1; b >= 0; b-- {
		seen += int(p.counts[b])
		if seen > above {
			return bucketTop(b)
		}
	}
	return 0
}

// The histogram has 1 µs buckets below 128 µs, then 16 per doubling: a
// quantile read from it is at most 1 µs (below 128 µs) or 1/16 above the
// true value, and never below it.
const (
	linearBuckets = 128
	perOctave     = 16
	histBuckets   = linearBuckets + 20*perOctave
)

func bucket(ns int64) int {
	us := ns / 1000
	if us < linearBuckets {
		return int(us)
	}
	octave := bits.Len64(uint64(us)) - 8 // us in [128·2^octave, 256·2^octave)
	sub := int((us >> uint(octave+3)) & (perOctave - 1))
	return min(linearBuckets+octave*perOctave+sub, histBuckets-1)
}

// bucketTop is the largest lateness (ns) bucket b holds.
func bucketTop(b int) int64 {
	if b < linearBuckets {
		return int64(b+1)*1000 - 1
	}
	octave := (b - linearBuckets) / perOctave
	sub := int64((b - linearBuckets) % perOctave)
	base := int64(128) << uint(octave)
	step := base / perOctave
	return (base+(sub+1)*step)*1000 - 1
}
