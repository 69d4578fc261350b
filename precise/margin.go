package precise

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tickscope/tickscope/internal/nativewait"
)

// The margin policy. A wait sleeps natively to deadline − margin and spins
// the rest: a native wake-up later than the margin (a miss) makes the wait
// late by the difference, an earlier one costs the difference in spinning.
//
// The default was chosen by leave-one-family-out cross-validation over
// families of seeded synthetic traces of the native timer (a quiet bare-
// metal machine, one with a periodic firmware stall, a busy one, one
// changing between the two, load that comes and goes, a CPU stolen in
// bursts, a shared virtual machine, Windows' high-resolution timer) and
// the traces recorded here, each replayed as a closed periodic loop under
// both Ticker schedules against spin_sleep's fixed margin
// (replay_test.go, crossval_test.go; the tables are in BENCHMARKS.md). It:
//
//   - starts at spin_sleep's fixed margin (nativewait.InitialMargin) and
//     does not go below it until it has seen a whole window of wake-ups
//     (1,024), so that a program that starts in a quiet moment does not
//     meet the timer's tail with a small margin;
//   - covers the 99th percentile of the window's lateness, plus a quarter
//     and 5 µs, and at least a peak that jumps to any wake-up's lateness
//     (plus the 5 µs) and decays by 1/16 a wake-up, so that a burst is
//     covered from its first late wake-up, before the quantile catches up;
//   - goes to the cap (spin_sleep's fixed margin) for 16 wake-ups after a
//     miss, so that a machine turning busy, whose wake-ups come later and
//     later, costs a late tick or two, not one per wake-up;
//   - stays at the cap while more than 0.4 % of the last 4,096 wake-ups
//     were at or past it (16 in 4 s at 1 kHz): load that comes and goes
//     keeps the cap through its quiet stretches, where a margin below it
//     would meet the next busy stretch's tail unprepared, while a bare-
//     metal machine's isolated firmware stalls do not hold it there.
//
// It never exceeds the cap. WithTail(q) covers quantile q instead, up to
// nativewait.MaxMargin, learning with the same warm-up and peak: fewer late
// wake-ups where the native timer's tail is heavy, at the cost of more
// spinning.
type marginPolicy struct {
	mu sync.Mutex
	// tail is the quantile of lateness covered, in parts per 10,000.
	tail int
	// guard (parts per 10,000; 0 for none) puts the margin at its limit
	// while that quantile of the window is at or above the limit.
	guard int
	// limit is the largest margin the policy may choose.
	limit int64
	// window holds the last calWindow lateness values (ns, ≥ 0); counts is
	// their histogram, kept incrementally so that learning a wake-up costs
	// a scan of the buckets, never a sort.
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
	// missHold keeps the margin at the limit for this many wake-ups after a
	// miss (0: none); sinceMiss counts the wake-ups since the last.
	missHold, sinceMiss int
	// memory has a bit for each of the last len(memory)·64 wake-ups, set
	// when it was at or past the limit (nil: none); while more than
	// memoryShare of them (parts per 10,000) were, the margin stays at the
	// limit. memoryAt is the bit the next wake-up takes, memoryCount the
	// bits set.
	memory                []uint64
	memoryAt, memoryCount int
	memoryShare           int
	// fixed keeps the margin where it starts: WithMargin's.
	fixed   bool
	current atomic.Int64
}

const (
	// calWindow is how many recent wake-ups the margin follows: a second at
	// 1 kHz, enough that a 99th percentile rests on ten values.
	calWindow = 1024
	// calMinSamples is the smallest window, and how many wake-ups a policy
	// sees before its margin moves at all.
	calMinSamples = 32
	// peakShift is the peak's decay: 1/16 a wake-up, a half-life of about
	// 11 wake-ups.
	peakShift = 4
	// minMargin keeps a spin long enough to absorb the wake-up's own
	// jitter; headroom is added to the quantile for the same reason, and a
	// quarter of the quantile on top for a tail that grows between samples.
	minMargin = int64(10 * time.Microsecond)
	headroom  = int64(5 * time.Microsecond)
	// initialMargin (spin_sleep's default accuracy on Linux and Windows)
	// and maxMargin are the native timer's, from package nativewait.
	initialMargin = int64(nativewait.InitialMargin)
	maxMargin     = int64(nativewait.MaxMargin)
	// DefaultTail is the quantile of the native timer's lateness the
	// default policy covers.
	DefaultTail = 0.99
)

// policyConfig is how a policy learns (marginPolicy's fields say what
// each does): the replay's candidates are configs.
type policyConfig struct {
	tail      float64
	guard     int // parts per 10,000
	warmup    int
	peakShift uint
	missHold  int
	memory    int // wake-ups, a multiple of 64
	share     int // parts per 10,000
}

// defaultConfig is the library's default, marginPolicy's doc says why.
var defaultConfig = policyConfig{tail: DefaultTail, warmup: calWindow, peakShift: peakShift, missHold: 16, memory: 4096, share: 40}

// newPolicy is the policy cfg within limit.
func newPolicy(cfg policyConfig, limit int64) *marginPolicy {
	p := newMarginPolicy(cfg.tail, limit, calWindow)
	p.guard, p.warmup, p.peakShift, p.missHold = cfg.guard, min(cfg.warmup, len(p.window)), cfg.peakShift, cfg.missHold
	if cfg.memory > 0 {
		p.memory, p.memoryShare = make([]uint64, max(cfg.memory/64, 1)), cfg.share
	}
	return p
}

// newDefaultPolicy is the library's default within limit (spin_sleep's
// fixed margin).
func newDefaultPolicy(limit int64) *marginPolicy { return newPolicy(defaultConfig, limit) }

// newMarginPolicy covers quantile tail of the last window wake-ups, up to
// limit, with the default's warm-up and peak.
func newMarginPolicy(tail float64, limit int64, window int) *marginPolicy {
	p := &marginPolicy{tail: tailParts(tail), limit: limit, window: make([]int64, min(max(window, calMinSamples), 1<<15)), peakShift: peakShift}
	p.start = min(initialMargin, limit)
	p.warmup = len(p.window)
	p.sinceMiss = 1 << 30
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

// observe learns a wake-up that was late (ns; negative is early) from a
// native sleep to the margin in force now: observeWake's.
func (p *marginPolicy) observe(late int64) { p.observeWake(late, p.current.Load()) }

// observeWake learns a wake-up late by late (ns; negative is early) from a
// native sleep to margin before its deadline, and moves the margin: to the
// limit while a miss was recent or the memory holds more than its share of
// wake-ups at or past the limit (or, with a guard, while the window's
// guard quantile reaches the limit); otherwise to the larger of the
// window's tail quantile (plus a quarter and the headroom) and the peak,
// within [minMargin, limit], and not below start during the warm-up.
func (p *marginPolicy) observeWake(late, margin int64) {
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
	if late > margin {
		p.sinceMiss = 0
	} else {
		p.sinceMiss = min(p.sinceMiss+1, 1<<30)
	}
	if p.memory != nil {
		word, bit := p.memoryAt/64, uint64(1)<<(p.memoryAt%64)
		if p.memory[word]&bit != 0 {
			p.memoryCount--
			p.memory[word] &^= bit
		}
		if late >= p.limit {
			p.memory[word] |= bit
			p.memoryCount++
		}
		p.memoryAt = (p.memoryAt + 1) % (len(p.memory) * 64)
	}
	if p.n < calMinSamples {
		return
	}
	if p.sinceMiss < p.missHold ||
		(p.memory != nil && p.memoryCount*10000 > p.memoryShare*len(p.memory)*64) ||
		(p.guard > 0 && p.quantile(p.guard) >= p.limit) {
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
