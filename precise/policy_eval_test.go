package precise

import (
	"bufio"
	"embed"
	"flag"
	"fmt"
	"math/rand/v2"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The margin-policy evaluator: each policy is replayed against traces of a
// native timer's wake-up lateness, offline, and judged by the lateness of
// the waits it would have made and the time it would have spun. It prints
// its table with
//
//	go test ./precise -run TestMarginPolicies -v -policy-table
//
// and asserts, on every trace, what the library's default promises.
//
// The replay: wait i asks the policy for its margin m, the native timer
// wakes L_i (trace value i) after deadline − m, so the wait is late by
// max(0, L_i − m) and spins max(0, m − L_i); then the policy learns L_i.
// The clock reads and the spin's exit (tens of ns) are left out, as is the
// CPU of the wake-up itself, which every policy pays alike (but the
// two-stage policy pays twice when it sleeps twice).

var policyTable = flag.Bool("policy-table", false, "print the margin-policy table (TestMarginPolicies)")

type trace struct {
	name string
	// fixed is spin_sleep's margin on the trace's OS: the margin the
	// library's cap is on that OS, and the one it must not do worse than;
	// ceiling is nativewait.MaxMargin there, the uncapped policies' bound.
	fixed, ceiling int64
	late           []int64
}

const us = int64(time.Microsecond)

// The recorded traces are embedded, so the test binary replays them from
// any directory (the Wine tests run it elsewhere).
//
//go:embed testdata/traces/*.txt
var recorded embed.FS

// loadTrace reads a trace recorded by tools/loop-bench -record.
func loadTrace(t testing.TB, name string) trace {
	f, err := recorded.Open(path.Join("testdata", "traces", name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := trace{name: name + " (recorded)", fixed: 125 * us, ceiling: 500 * us}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		v, err := strconv.ParseInt(line, 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		tr.late = append(tr.late, v)
	}
	if len(tr.late) < 1000 {
		t.Fatalf("%s: %d samples", name, len(tr.late))
	}
	return tr
}

// Synthetic traces, seeded so that the table is the same on every run.
func syntheticTraces() []trace {
	const n = 8000
	gen := func(name string, fixed int64, seed uint64, f func(r *rand.Rand, i int) int64) trace {
		r := rand.New(rand.NewPCG(seed, 15))
		tr := trace{name: name, fixed: fixed, ceiling: 500 * us, late: make([]int64, n)}
		if fixed == 700*us {
			tr.ceiling = 4000 * us // Windows'
		}
		for i := range tr.late {
			tr.late[i] = f(r, i)
		}
		return tr
	}
	uniform := func(r *rand.Rand, lo, hi int64) int64 { return lo + r.Int64N(hi-lo+1) }
	bare := func(r *rand.Rand, _ int) int64 {
		// A quiet bare-metal machine: 2–10 µs, and 1 in 300 at about 50 µs.
		if r.IntN(300) == 0 {
			return uniform(r, 45*us, 55*us)
		}
		return uniform(r, 2*us, 10*us)
	}
	busy := func(r *rand.Rand, _ int) int64 {
		// A busy machine: 20–80 µs, 5 % at 100–300 µs, 1 % lost the CPU
		// for 0.3–3 ms.
		switch x := r.IntN(100); {
		case x == 0:
			return uniform(r, 300*us, 3000*us)
		case x < 6:
			return uniform(r, 100*us, 300*us)
		}
		return uniform(r, 20*us, 80*us)
	}
	return []trace{
		gen("bare-metal (synthetic)", 125*us, 1, bare),
		gen("busy (synthetic)", 125*us, 2, busy),
		// The quiet machine turns busy half-way: how fast a policy adapts.
		gen("quiet then busy (synthetic)", 125*us, 3, func(r *rand.Rand, i int) int64 {
			if i < n/2 {
				return bare(r, i)
			}
			return busy(r, i)
		}),
		// Windows' high-resolution waitable timer as ../shared/notes/
		// windows-timers.md measures it (a 0.5 ms wait ends 0.53–0.78 ms,
		// in steps of about 0.5 ms): 30–280 µs late, 2 % a step later.
		// SIMULATED: real Windows is not measured here.
		gen("windows-hr SIMULATED", 700*us, 4, func(r *rand.Rand, _ int) int64 {
			l := uniform(r, 30*us, 280*us)
			if r.IntN(50) == 0 {
				l += 500 * us
			}
			return l
		}),
	}
}

// policy is what the replay needs of a margin policy.
type policy interface {
	margin() int64
	observe(late int64)
}

type fixedPolicy int64

func (f fixedPolicy) margin() int64 { return int64(f) }
func (fixedPolicy) observe(int64)   {}

// decayPolicy follows the largest lateness seen, plus the headroom, and
// lets it decay by 1/512 a wake-up (a half-life of about 350 wake-ups).
type decayPolicy struct{ m, limit int64 }

func (d *decayPolicy) margin() int64 { return d.m }
func (d *decayPolicy) observe(late int64) {
	d.m = min(max(d.m-d.m/512, late+headroom, minMargin), d.limit)
}

// jumpPolicy is a quantile policy whose margin also jumps to a lateness
// above it and falls back to the quantile with a half-life of about 32
// wake-ups: a tail that appears suddenly is covered at once.
type jumpPolicy struct {
	q    *marginPolicy
	peak int64
}

func (j *jumpPolicy) margin() int64 { return min(max(j.q.margin(), j.peak), j.q.limit) }
func (j *jumpPolicy) observe(late int64) {
	j.q.observe(late)
	j.peak = max(j.peak-j.peak/46, late+headroom)
}

type candidate struct {
	name string
	// make builds the policy for a trace; twoStage, if set, is the margin
	// policy of a second native sleep made when the first wakes more than
	// twoStageGap before the second's margin.
	make     func(tr trace) policy
	twoStage func(tr trace) policy
}

const twoStageGap = 50 * time.Microsecond

func candidates() []candidate {
	quantile := func(tail float64, window int, capped bool) func(trace) policy {
		return func(tr trace) policy {
			limit := tr.ceiling
			if capped {
				limit = tr.fixed
			}
			p := newMarginPolicy(tail, limit, window)
			p.current.Store(min(tr.fixed, limit))
			return p
		}
	}
	guarded := func(parts int) func(trace) policy {
		return func(tr trace) policy {
			p := quantile(DefaultTail, calWindow, true)(tr).(*marginPolicy)
			p.guard = parts
			return p
		}
	}
	return []candidate{
		{name: "fixed 125µs (spin_sleep, Linux)", make: func(trace) policy { return fixedPolicy(125 * us) }},
		{name: "fixed 700µs (spin_sleep, Windows)", make: func(trace) policy { return fixedPolicy(700 * us) }},
		{name: "p97 w1024 (issue 4's)", make: quantile(0.97, 1024, false)},
		{name: "p99 w256", make: quantile(0.99, 256, false)},
		{name: "p99 w1024", make: quantile(0.99, 1024, false)},
		{name: "p99 w4096", make: quantile(0.99, 4096, false)},
		{name: "p99.9 w1024 (WithTail(0.999))", make: quantile(0.999, 1024, false)},
		{name: "p99.9 w4096", make: quantile(0.999, 4096, false)},
		{name: "max, decaying", make: func(tr trace) policy { return &decayPolicy{m: min(tr.fixed, tr.ceiling), limit: tr.ceiling} }},
		{name: "p99 w1024 ≤ fixed", make: quantile(DefaultTail, calWindow, true)},
		{name: "p99 w1024 ≤ fixed, guard p99.8 (default)", make: func(tr trace) policy {
			p := newDefaultPolicy(tr.fixed)
			p.current.Store(tr.fixed)
			return p
		}},
		{name: "p99.9 w1024 ≤ fixed", make: quantile(0.999, 1024, true)},
		{name: "p99 w1024 ≤ fixed, guard p99.5", make: guarded(9950)},
		{name: "p99 w1024 ≤ fixed, guard p99.9", make: guarded(9990)},
		{name: "p99 w1024 jumping ≤ fixed", make: func(tr trace) policy {
			return &jumpPolicy{q: quantile(DefaultTail, calWindow, true)(tr).(*marginPolicy)}
		}},
		{name: "two-stage: p99.9, then the default", make: quantile(0.999, 1024, false), twoStage: func(tr trace) policy { return newDefaultPolicy(tr.fixed) }},
	}
}

type outcome struct {
	p50, p99, max int64 // lateness, ns
	spin          float64
	sleeps        float64 // native sleeps per wait
}

// replay runs c over tr. A second native sleep's lateness is another value
// of the trace, far from this one, as a later wake-up would be.
func replay(c candidate, tr trace) outcome {
	p := c.make(tr)
	var second policy
	if c.twoStage != nil {
		second = c.twoStage(tr)
	}
	n := len(tr.late)
	late := make([]int64, n)
	var spin, sleeps int64
	for i, l := range tr.late {
		m := p.margin()
		ahead := m - l // how far before the deadline the wake-up came
		sleeps++
		p.observe(l)
		if second != nil {
			if m2 := second.margin(); ahead-m2 > int64(twoStageGap) {
				l2 := tr.late[(i+n/2)%n]
				second.observe(l2)
				ahead = m2 - l2
				sleeps++
			}
		}
		late[i] = max(-ahead, 0)
		spin += max(ahead, 0)
	}
	slices.Sort(late)
	return outcome{
		p50:    late[n/2],
		p99:    late[(n*99+99)/100-1],
		max:    late[n-1],
		spin:   float64(spin) / float64(n),
		sleeps: float64(sleeps) / float64(n),
	}
}

func allTraces(t testing.TB) []trace {
	return append([]trace{loadTrace(t, "clock-abs"), loadTrace(t, "clock-abs-busy"), loadTrace(t, "timerfd")}, syntheticTraces()...)
}

// TestMarginPolicies replays every candidate against every trace and checks
// the default's promises: p99 lateness within 1 µs of the fixed margin's
// on every trace and spin time no more than it; and on the bare-metal
// trace at most 25 % of the fixed margin's spin at equal p99.
func TestMarginPolicies(t *testing.T) {
	cands := candidates()
	var out strings.Builder
	for _, tr := range allTraces(t) {
		fmt.Fprintf(&out, "\n%s, %d wake-ups; spin_sleep's margin on its OS %v\n", tr.name, len(tr.late), time.Duration(tr.fixed))
		fmt.Fprintf(&out, "| policy | lateness p50 | p99 | max | spin per wait | native sleeps per wait |\n| --- | --- | --- | --- | --- | --- |\n")
		results := map[string]outcome{}
		for _, c := range cands {
			o := replay(c, tr)
			results[c.name] = o
			fmt.Fprintf(&out, "| %s | %s | %s | %s | %s | %.2f |\n", c.name, fmtUs(float64(o.p50)), fmtUs(float64(o.p99)), fmtUs(float64(o.max)), fmtUs(o.spin), o.sleeps)
		}
		fixed := replay(candidate{make: func(trace) policy { return fixedPolicy(tr.fixed) }}, tr)
		def := results["p99 w1024 ≤ fixed, guard p99.8 (default)"]
		if def.p99 > fixed.p99+us {
			t.Errorf("%s: the default's p99 %v, the fixed margin's %v", tr.name, time.Duration(def.p99), time.Duration(fixed.p99))
		}
		if def.spin > fixed.spin {
			t.Errorf("%s: the default spins %v a wait, the fixed margin %v", tr.name, time.Duration(def.spin), time.Duration(fixed.spin))
		}
		if strings.HasPrefix(tr.name, "bare-metal") && (def.spin > 0.25*fixed.spin || def.p99 != fixed.p99) {
			t.Errorf("%s: the default spins %v at p99 %v, the fixed margin %v at p99 %v: want at most 25 %% at equal p99",
				tr.name, time.Duration(def.spin), time.Duration(def.p99), time.Duration(fixed.spin), time.Duration(fixed.p99))
		}
	}
	if *policyTable {
		fmt.Print(out.String())
	}
}

func fmtUs(ns float64) string { return fmt.Sprintf("%.1f µs", ns/1e3) }

// The histogram's quantile is never below the true value and at most one
// bucket above it.
func TestBucketBounds(t *testing.T) {
	for _, ns := range []int64{0, 999, 1000, 127_999, 128_000, 135_999, 136_000, 255_999, 256_000, 1_000_000, 3_922_423, 1 << 40} {
		b := bucket(ns)
		if top := bucketTop(b); b < histBuckets-1 && (top < ns || (b > 0 && bucketTop(b-1) >= ns)) {
			t.Errorf("%d ns in bucket %d, which holds (%d, %d]", ns, b, bucketTop(b-1), top)
		}
	}
	for b := 1; b < histBuckets; b++ {
		if bucketTop(b) <= bucketTop(b-1) || bucket(bucketTop(b)) != b || bucket(bucketTop(b-1)+1) != b {
			t.Fatalf("bucket %d: top %d, previous top %d", b, bucketTop(b), bucketTop(b-1))
		}
	}
}

// The guard puts the default at its cap while the 99.8th percentile
// reaches it, and lets it down when that passes.
func TestDefaultPolicyGuard(t *testing.T) {
	p := newDefaultPolicy(125 * us)
	// 1 in 200 at 400 µs: p99 is 5 µs, p99.8 is 400 µs.
	for i := range 3000 {
		p.observe(map[bool]int64{true: 400 * us, false: 5 * us}[i%200 == 0])
	}
	if m := p.margin(); m != 125*us {
		t.Errorf("a 0.5 %% tail past the cap: margin %v, want the cap", time.Duration(m))
	}
	for range calWindow {
		p.observe(5 * us)
	}
	if m := p.margin(); m > 13*us {
		t.Errorf("the tail gone: margin %v, want about 12.5 µs", time.Duration(m))
	}
}

// The policy follows the quantile it is asked for and keeps its bounds.
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
		for i := range 3000 {
			p.observe(tt.late(i))
		}
		if m := p.margin(); m < tt.wantLo || m > tt.wantH {
			t.Errorf("%s: margin %v, want %v..%v", tt.name, time.Duration(m), time.Duration(tt.wantLo), time.Duration(tt.wantH))
		}
	}
}

// BenchmarkMarginObserve is the bookkeeping a wait pays after its spin.
func BenchmarkMarginObserve(b *testing.B) {
	p := newMarginPolicy(DefaultTail, initialMargin, calWindow)
	for i := 0; b.Loop(); i++ {
		p.observe(int64(i%97) * us)
	}
}
