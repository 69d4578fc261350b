package precise

import (
	"testing"
	"time"
)

// The memory puts the default at its cap while more than 16 of the last
// 4,096 wake-ups were at or past it, long after the misses' own hold and
// the peak have let go, and lets it down once they have left the memory;
// 16 alone do not hold it.
func TestDefaultPolicyMemory(t *testing.T) {
	const limit = 125 * us
	quiet := func(p *marginPolicy, n int) {
		for range n {
			p.observe(5 * us)
		}
	}
	stalls := func(p *marginPolicy, count int) {
		for range count {
			p.observe(400 * us)
			quiet(p, 200)
		}
	}
	p := newDefaultPolicy(limit)
	quiet(p, 2*calWindow)
	stalls(p, 17)
	if m := p.margin(); m != limit {
		t.Errorf("17 stalls past the cap in the last 4,096 wake-ups, the last 200 ago: margin %v, want the cap", time.Duration(m))
	}
	quiet(p, 4096)
	if m := p.margin(); m > 13*us {
		t.Errorf("the stalls forgotten: margin %v, want about 12.5 µs", time.Duration(m))
	}
	p = newDefaultPolicy(limit)
	quiet(p, 2*calWindow)
	stalls(p, 16)
	if m := p.margin(); m > 13*us {
		t.Errorf("16 stalls past the cap in the last 4,096 wake-ups: margin %v, want about 12.5 µs", time.Duration(m))
	}
}

// The policy follows the quantile it is asked for and keeps its bounds
// (the peak, which TestMarginPolicyLearns covers, is off here).
func TestMarginPolicyFollowsTail(t *testing.T) {
	for _, tt := range []struct {
		name          string
		tail          float64
		limit         int64
		late          func(i int) int64
		wantLo, wantH int64
	}{
		// 2 % at 100 µs: p99 covers them, p97 does not.
		{"p99 covers a 2 % tail", 0.99, maxMargin, func(i int) int64 { return map[bool]int64{true: 100 * us, false: 5 * us}[i%50 == 0] }, 100 * us, 132 * us},
		{"p97 does not", 0.97, maxMargin, func(i int) int64 { return map[bool]int64{true: 100 * us, false: 5 * us}[i%50 == 0] }, minMargin, 13 * us},
		{"the cap holds", 0.99, 125 * us, func(int) int64 { return 400 * us }, 125 * us, 125 * us},
		{"never under the minimum", 0.99, maxMargin, func(int) int64 { return 0 }, minMargin, minMargin},
		{"early wake-ups count as 0", 0.99, maxMargin, func(int) int64 { return -50 * us }, minMargin, minMargin},
	} {
		p := newMarginPolicy(tt.tail, tt.limit, 1024)
		p.peakShift = 0
		for i := range 3000 {
			p.observe(tt.late(i))
		}
		if m := p.margin(); m < tt.wantLo || m > tt.wantH {
			t.Errorf("%s: margin %v, want %v..%v", tt.name, time.Duration(m), time.Duration(tt.wantLo), time.Duration(tt.wantH))
		}
	}
}

// How the default learns: it keeps the fixed margin until a whole window
// has been seen; a miss (a wake-up later than the margin) puts it at the
// cap for 16 wake-ups, then the peak lets go; a late wake-up within the margin is covered by the
// peak at once and let go within tens of wake-ups; and after a stall the
// peak holds the cap the longer the longer the stall was.
func TestMarginPolicyLearns(t *testing.T) {
	const limit = 125 * us
	quiet := func(p *marginPolicy, n int) {
		for range n {
			p.observe(5 * us)
		}
	}
	settled := func(p *marginPolicy) { quiet(p, 2*calWindow) } // margin about 12.5 µs
	for _, tt := range []struct {
		name           string
		feed           func(p *marginPolicy)
		wantLo, wantHi int64
	}{
		{"no lower before a whole window", func(p *marginPolicy) { quiet(p, calWindow-1) }, limit, limit},
		{"lower after a whole window", func(p *marginPolicy) { quiet(p, calWindow) }, minMargin, 13 * us},
		{"a miss: the cap", func(p *marginPolicy) { settled(p); p.observe(80 * us) }, limit, limit},
		{"for 16 wake-ups", func(p *marginPolicy) { settled(p); p.observe(80 * us); quiet(p, 15) }, limit, limit},
		{"then the peak", func(p *marginPolicy) { settled(p); p.observe(80 * us); quiet(p, 16) }, 25 * us, 31 * us},
		{"which lets go", func(p *marginPolicy) { settled(p); p.observe(80 * us); quiet(p, 60) }, minMargin, 13 * us},
		{"within the margin: no miss, the peak covers it", func(p *marginPolicy) { settled(p); p.observe(10 * us) }, 15 * us, 15 * us},
		{"a 3 ms stall: the cap for 45 wake-ups", func(p *marginPolicy) { settled(p); p.observe(3000 * us); quiet(p, 45) }, limit, limit},
		{"not for 100", func(p *marginPolicy) { settled(p); p.observe(3000 * us); quiet(p, 100) }, minMargin, 20 * us},
	} {
		p := newDefaultPolicy(limit)
		tt.feed(p)
		if m := p.margin(); m < tt.wantLo || m > tt.wantHi {
			t.Errorf("%s: margin %v, want %v..%v", tt.name, time.Duration(m), time.Duration(tt.wantLo), time.Duration(tt.wantHi))
		}
	}
}
