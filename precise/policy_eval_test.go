package precise

import (
	"bufio"
	"embed"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"path"
	"regexp"
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
	// period is the loop's period the trace was recorded at (1 ms for the
	// synthetic ones), which the closed-loop replay keeps.
	period int64
	late   []int64
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
		// The header says the rate: "# lateness (ns) of clock-abs at 500 Hz, ...".
		if m := rateInHeader.FindStringSubmatch(line); m != nil && tr.period == 0 {
			hz, _ := strconv.Atoi(m[1])
			tr.period = int64(time.Second) / int64(max(hz, 1))
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		v, err := strconv.ParseInt(line, 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		tr.late = append(tr.late, v)
	}
	if len(tr.late) < 1000 || tr.period == 0 {
		t.Fatalf("%s: %d samples, period %d ns (from the header)", name, len(tr.late), tr.period)
	}
	return tr
}

var rateInHeader = regexp.MustCompile(`^# lateness \(ns\) of \S+ at (\d+) Hz`)

// Synthetic traces, seeded so that the table is the same on every run.
func syntheticTraces() []trace {
	const n = 8000
	gen := func(name string, fixed int64, seed uint64, f func(r *rand.Rand, i int) int64) trace {
		r := rand.New(rand.NewPCG(seed, 15))
		tr := trace{name: name, fixed: fixed, ceiling: 500 * us, period: 1000 * us, late: make([]int64, n)}
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
		// Bursts of wake-ups late by less than the cap: 400 of every 2,000
		// wake-ups, a quarter of them 60–120 µs late, on the quiet machine.
		// The fixed margin covers them all; a policy that learns covers
		// them only once it has seen them.
		gen("bursts under the cap (synthetic)", 125*us, 5, func(r *rand.Rand, i int) int64 {
			if i%2000 >= 1600 && r.IntN(4) == 0 {
				return uniform(r, 60*us, 120*us)
			}
			return bare(r, i)
		}),
		// Windows' high-resolution waitable timer as measured on an
		// i5-8265U under Windows 10 22H2 (a 0.5 ms wait ends 0.53–0.78 ms,
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

type candidate struct {
	name string
	// make builds the policy for a trace; twoStage, if set, is the margin
	// policy of a second native sleep made when the first wakes more than
	// twoStageGap before the second's margin.
	make     func(tr trace) policy
	twoStage func(tr trace) policy
}

// runLength is the wake-ups of one loop-bench run at 500 Hz (3 s): each
// trace is also cut into runs of this length, each replayed from a fresh
// policy, as a program that has just started meets the timer.
const runLength = 1500

const twoStageGap = 50 * time.Microsecond

// Names of the candidates the test judges.
const (
	defaultName = "default: p99 ≤ fixed, guard p99.8, warm-up 1024, peak"
	firstName   = "p99 ≤ fixed, guard p99.8 (first round's default)"
)

// onTrace starts p where the library starts on the trace's OS (spin_sleep's
// margin there), as the library's constructors do for the OS they run on.
func onTrace(p *marginPolicy, tr trace) *marginPolicy {
	p.start = min(tr.fixed, p.limit)
	p.current.Store(p.start)
	return p
}

func candidates() []candidate {
	// plain is a quantile policy as the first round replayed them: it moves
	// after calMinSamples wake-ups and has no peak.
	plain := func(tail float64, window int, capped bool, guard int) func(trace) policy {
		return func(tr trace) policy {
			limit := tr.ceiling
			if capped {
				limit = tr.fixed
			}
			p := onTrace(newMarginPolicy(tail, limit, window), tr)
			p.warmup, p.peakShift, p.guard = calMinSamples, 0, guard
			return p
		}
	}
	// library is the default as the library builds it, with the warm-up
	// and the peak's decay changed.
	library := func(warmup int, shift uint) func(trace) policy {
		return func(tr trace) policy {
			p := onTrace(newDefaultPolicy(tr.fixed), tr)
			p.warmup, p.peakShift = warmup, shift
			return p
		}
	}
	return []candidate{
		{name: "fixed 125µs (spin_sleep, Linux)", make: func(trace) policy { return fixedPolicy(125 * us) }},
		{name: "fixed 700µs (spin_sleep, Windows)", make: func(trace) policy { return fixedPolicy(700 * us) }},
		{name: "p97 w1024 (issue 4's)", make: plain(0.97, 1024, false, 0)},
		{name: "p99 w256", make: plain(0.99, 256, false, 0)},
		{name: "p99 w1024", make: plain(0.99, 1024, false, 0)},
		{name: "p99 w4096", make: plain(0.99, 4096, false, 0)},
		{name: "p99.9 w1024", make: plain(0.999, 1024, false, 0)},
		{name: "max, decaying", make: func(tr trace) policy { return &decayPolicy{m: min(tr.fixed, tr.ceiling), limit: tr.ceiling} }},
		{name: "p99 ≤ fixed", make: plain(DefaultTail, calWindow, true, 0)},
		{name: firstName, make: plain(DefaultTail, calWindow, true, defaultGuard)},
		{name: "first + warm-up 1024", make: library(calWindow, 0)},
		{name: "first + peak", make: library(calMinSamples, peakShift)},
		{name: defaultName, make: func(tr trace) policy { return onTrace(newDefaultPolicy(tr.fixed), tr) }},
		{name: "default, peak decaying 1/64", make: library(calWindow, peakShift+1)},
		{name: "default, warm-up 256", make: library(256, peakShift)},
		{name: "WithTail(0.999)", make: func(tr trace) policy { return onTrace(newMarginPolicy(0.999, tr.ceiling, calWindow), tr) }},
		{name: "two-stage: p99.9, then the default", make: plain(0.999, 1024, false, 0), twoStage: func(tr trace) policy { return onTrace(newDefaultPolicy(tr.fixed), tr) }},
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
	if n == 0 {
		return outcome{}
	}
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
	var traces []trace
	for _, name := range []string{"clock-abs", "clock-abs-busy", "timerfd", "clock-abs-tail", "clock-abs-500hz", "timerfd-500hz"} {
		traces = append(traces, loadTrace(t, name))
	}
	return append(traces, syntheticTraces()...)
}

// judged is a candidate's replay of one trace, whole and run by run.
type judged struct {
	whole outcome
	// worstRun is the largest amount (ns) by which a run's p99 exceeded the
	// fixed margin's p99 over the same run (negative: never worse).
	worstRun int64
}

func judge(c candidate, tr trace) judged {
	fixed := candidate{make: func(trace) policy { return fixedPolicy(tr.fixed) }}
	j := judged{whole: replay(c, tr), worstRun: math.MinInt64}
	for i := 0; i+runLength <= len(tr.late); i += runLength {
		run := tr
		run.late = tr.late[i : i+runLength]
		j.worstRun = max(j.worstRun, replay(c, run).p99-replay(fixed, run).p99)
	}
	return j
}

// promises lists where j breaks what the default promises against the
// fixed margin on tr: p99 lateness within 1 µs of the fixed margin's, over
// the whole trace and over every run; no more spin; and on the bare-metal
// trace at most 25 % of the fixed margin's spin at equal p99.
func promises(tr trace, j judged) []string {
	fixed := replay(candidate{make: func(trace) policy { return fixedPolicy(tr.fixed) }}, tr)
	var broken []string
	if j.whole.p99 > fixed.p99+us {
		broken = append(broken, fmt.Sprintf("p99 %v, the fixed margin's %v", time.Duration(j.whole.p99), time.Duration(fixed.p99)))
	}
	if j.worstRun > us {
		broken = append(broken, fmt.Sprintf("a run's p99 %v above the fixed margin's", time.Duration(j.worstRun)))
	}
	if j.whole.spin > fixed.spin {
		broken = append(broken, fmt.Sprintf("spins %v a wait, the fixed margin %v", time.Duration(j.whole.spin), time.Duration(fixed.spin)))
	}
	if strings.HasPrefix(tr.name, "bare-metal") && (j.whole.spin > 0.25*fixed.spin || j.whole.p99 != fixed.p99) {
		broken = append(broken, fmt.Sprintf("spins %v at p99 %v, the fixed margin %v at p99 %v: want at most 25 %% at equal p99",
			time.Duration(j.whole.spin), time.Duration(j.whole.p99), time.Duration(fixed.spin), time.Duration(fixed.p99)))
	}
	return broken
}

// TestMarginPolicies replays every candidate against every trace, prints
// the table with -policy-table, and checks the default's promises on every
// trace. The first round's default, which moved after 32 wake-ups and had
// no peak, breaks them on the 500 Hz traces recorded here: the check can
// fail, and does where the first round's policy lost in loop-bench.
func TestMarginPolicies(t *testing.T) {
	cands := candidates()
	traces := allTraces(t)
	var detail, matrix strings.Builder
	fmt.Fprintf(&matrix, "| policy |")
	for _, tr := range traces {
		fmt.Fprintf(&matrix, " %s |", tr.name)
	}
	fmt.Fprintf(&matrix, "\n| --- |%s\n", strings.Repeat(" --- |", len(traces)))
	results := make([][]judged, len(cands))
	firstBroken := 0
	for _, tr := range traces {
		fmt.Fprintf(&detail, "\n%s, %d wake-ups; spin_sleep's margin on its OS %v\n", tr.name, len(tr.late), time.Duration(tr.fixed))
		fmt.Fprintf(&detail, "| policy | lateness p50 | p99 | max | spin per wait | native sleeps per wait | worst %d-wake-up run's p99 − the fixed margin's |\n| --- | --- | --- | --- | --- | --- | --- |\n", runLength)
		for ci, c := range cands {
			j := judge(c, tr)
			results[ci] = append(results[ci], j)
			o := j.whole
			fmt.Fprintf(&detail, "| %s | %s | %s | %s | %s | %.2f | %s |\n", c.name, fmtUs(float64(o.p50)), fmtUs(float64(o.p99)), fmtUs(float64(o.max)), fmtUs(o.spin), o.sleeps, fmtUs(float64(j.worstRun)))
			switch c.name {
			case defaultName:
				for _, b := range promises(tr, j) {
					t.Errorf("%s: the default %s", tr.name, b)
				}
			case firstName:
				firstBroken += len(promises(tr, j))
			}
		}
	}
	if firstBroken == 0 {
		t.Errorf("the first round's default kept every promise on every trace: the check no longer tells the policies apart")
	}
	for ci, c := range cands {
		fmt.Fprintf(&matrix, "| %s |", c.name)
		for _, j := range results[ci] {
			cell := fmt.Sprintf(" %.1f / %.1f / %.1f", float64(j.whole.p99)/1e3, float64(max(j.worstRun, 0))/1e3, j.whole.spin/1e3)
			if j.whole.sleeps > 1.005 {
				cell += fmt.Sprintf(" (%.2f)", j.whole.sleeps)
			}
			fmt.Fprintf(&matrix, "%s |", cell)
		}
		fmt.Fprintln(&matrix)
	}
	if *policyTable {
		fmt.Print(detail.String())
		fmt.Print("\nEach cell: lateness p99 / worst run's p99 above the fixed margin's (0 if never) / spin per wait, µs; (native sleeps per wait where not 1)\n\n")
		fmt.Print(matrix.String())
	}
}

// replayLoop keeps a periodic loop of tr.period over the trace with policy
// p, as loop-bench keeps one, and returns each tick's lateness: a closed
// loop, where a late tick moves the next wait's start, so that the next
// wait sleeps less or not at all. Wait i begins where tick i−1 ended, asks
// p for its margin m, sleeps natively to its deadline − m if that is still
// ahead, waking trace value i late, and spins to the deadline. Value i is
// used up whether the wait sleeps or not, so that two policies meet the
// same wake-ups at the same ticks.
//
// With catchUp the schedule is a Ticker's (Skip): a tick less than a
// period late is still delivered, at once. Without it, it is the
// measurement loop's (sample.Series, which times the seam's hybrid): a
// deadline already past when the wait begins is skipped.
func replayLoop(p policy, tr trace, catchUp bool) []int64 {
	period := tr.period
	now, next := int64(0), period
	late := make([]int64, 0, len(tr.late))
	for _, l := range tr.late {
		if catchUp {
			if next <= now-period {
				next += (now - next) / period * period
			}
		} else {
			for next <= now {
				next += period
			}
		}
		due := next
		if wake := due - p.margin(); wake > now {
			now = wake + max(l, 0)
			p.observe(l)
		}
		now = max(now, due)
		late = append(late, now-due)
		next = due + period
	}
	slices.Sort(late)
	return late
}

func p99(sorted []int64) int64 { return sorted[(len(sorted)*99+99)/100-1] }

// TestLoopReplay replays the fixed margin and the default in a closed
// loop, under both schedules, on every trace: with the same schedule the
// default's p99 is within 1 µs of the fixed margin's (as issue 4's p97,
// which does not keep that promise, shows the check can fail), and the
// Ticker's schedule is what puts precise.Ticker's p99 above the seam's
// hybrid's in loop-bench (BENCHMARKS.md prints this table).
func TestLoopReplay(t *testing.T) {
	var out strings.Builder
	fmt.Fprintf(&out, "\n| trace | period | fixed, the loop's schedule | default, the loop's schedule | fixed, the Ticker's schedule | default, the Ticker's schedule |\n| --- | --- | --- | --- | --- | --- |\n")
	p97Broken := 0
	for _, tr := range allTraces(t) {
		fixed := func() policy { return fixedPolicy(tr.fixed) }
		def := func() policy { return onTrace(newDefaultPolicy(tr.fixed), tr) }
		p97 := func() policy { return onTrace(newMarginPolicy(0.97, tr.ceiling, calWindow), tr) }
		fmt.Fprintf(&out, "| %s | %v |", tr.name, time.Duration(tr.period))
		for _, catchUp := range []bool{false, true} {
			f, d := p99(replayLoop(fixed(), tr, catchUp)), p99(replayLoop(def(), tr, catchUp))
			fmt.Fprintf(&out, " %.1f | %.1f |", float64(f)/1e3, float64(d)/1e3)
			if d > f+us {
				t.Errorf("%s, catch-up %v: the default's p99 %v in a closed loop, the fixed margin's %v", tr.name, catchUp, time.Duration(d), time.Duration(f))
			}
			if p99(replayLoop(p97(), tr, catchUp)) > f+us {
				p97Broken++
			}
		}
		fmt.Fprintln(&out)
	}
	if p97Broken == 0 {
		t.Error("issue 4's p97 kept the promise on every trace: the check no longer tells policies apart")
	}
	if *policyTable {
		fmt.Print("\nClosed-loop p99 lateness, µs:\n" + out.String())
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
// has been seen, covers a late wake-up from the next wait on, lets a late
// value go within tens of wake-ups, and holds the cap for longer after a
// stall the longer the stall was.
func TestMarginPolicyLearns(t *testing.T) {
	const limit = 125 * us
	quiet := func(p *marginPolicy, n int) {
		for range n {
			p.observe(5 * us)
		}
	}
	for _, tt := range []struct {
		name           string
		feed           func(p *marginPolicy)
		wantLo, wantHi int64
	}{
		{"no lower before a whole window", func(p *marginPolicy) { quiet(p, calWindow-1) }, limit, limit},
		{"lower after a whole window", func(p *marginPolicy) { quiet(p, calWindow) }, minMargin, 13 * us},
		{"a late wake-up is covered at once", func(p *marginPolicy) { quiet(p, 2*calWindow); p.observe(80 * us) }, 85 * us, 85 * us},
		{"and let go within a hundred wake-ups", func(p *marginPolicy) { quiet(p, 2*calWindow); p.observe(80 * us); quiet(p, 100) }, minMargin, 13 * us},
		{"a 3 ms stall holds the cap for 90 wake-ups", func(p *marginPolicy) { quiet(p, 2*calWindow); p.observe(3000 * us); quiet(p, 90) }, limit, limit},
		{"not for 200", func(p *marginPolicy) { quiet(p, 2*calWindow); p.observe(3000 * us); quiet(p, 200) }, minMargin, 20 * us},
	} {
		p := newDefaultPolicy(limit)
		tt.feed(p)
		if m := p.margin(); m < tt.wantLo || m > tt.wantHi {
			t.Errorf("%s: margin %v, want %v..%v", tt.name, time.Duration(m), time.Duration(tt.wantLo), time.Duration(tt.wantHi))
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
