package precise

import (
	"bufio"
	"cmp"
	"embed"
	"flag"
	"fmt"
	"math/rand/v2"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The margin-policy replay: a policy is judged offline, against traces of
// a native timer's wake-up lateness, by the periodic loop it would have
// kept. Wait i begins where tick i−1 ended, asks the policy for its margin
// m, sleeps natively to its deadline − m if that is still ahead, wakes
// trace value i late, and spins to the deadline: a closed loop, where a
// late tick moves the next wait's start. Value i is used up whether the
// wait sleeps or not, so that two policies meet the same wake-ups at the
// same ticks. The clock reads and the spin's exit (tens of ns) are left
// out, as is the CPU of the wake-up itself, which every policy pays alike.
//
// Every policy is judged against spin_sleep's fixed margin on the same
// trace and schedule. The promise the default keeps (TestMarginPolicy-
// Families asserts it on every trace, under both schedules): its p99
// lateness at most 1 µs above the fixed margin's, never more spin, and on
// a quiet bare-metal machine at most a quarter of its spin.
//
//	go test ./precise -run TestMarginPolicyFamilies -v -policy-table   # the table per family
//	go test ./precise -run TestMarginPolicyCrossValidation -v -policy-sweep -timeout 30m

var (
	policyTable  = flag.Bool("policy-table", false, "print the margin-policy tables (TestMarginPolicyFamilies)")
	policySeed   = flag.Uint64("policy-seed", 0, "draw the synthetic traces from this seed instead of 0: traces no policy was chosen on (the allowed breaks are then reported, not asserted)")
	policyTraces = flag.Int("policy-traces", 0, "synthetic traces a family (0: 40 for TestMarginPolicyFamilies, 100 for the cross-validation)")
)

type trace struct {
	name   string
	family string
	// fixed is spin_sleep's margin on the trace's OS: the margin the
	// library's cap is on that OS, and the one it must not do worse than;
	// ceiling is nativewait.MaxMargin there, the uncapped policies' bound.
	fixed, ceiling int64
	// period is the loop's period the trace was recorded (or is replayed) at.
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
	tr := trace{name: name, family: "recorded", fixed: 125 * us, ceiling: 500 * us}
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

// recordedTraces are the traces in testdata/traces, each file's header
// saying how and under what load it was recorded.
func recordedTraces(t testing.TB) []trace {
	entries, err := recorded.ReadDir("testdata/traces")
	if err != nil {
		t.Fatal(err)
	}
	var traces []trace
	for _, e := range entries {
		traces = append(traces, loadTrace(t, strings.TrimSuffix(e.Name(), ".txt")))
	}
	return traces
}

// A family is a kind of machine: its generator draws a trace's parameters
// at random (from the trace's own seed), so that no policy can be fitted to
// one trace of it.
type family struct {
	name string
	// windows: the trace is of Windows' high-resolution waitable timer
	// (spin_sleep's margin 700 µs, nativewait.MaxMargin 4 ms there).
	windows bool
	// quiet: the 25 % spin target applies (a bare-metal machine).
	quiet bool
	// long: the traces are 20,000 to 60,000 wake-ups (20 s to 2 min), a
	// program's life after its first second; otherwise 1,500 to 10,000.
	long bool
	gen  func(r *rand.Rand, n int, period int64) []int64
}

func uniform(r *rand.Rand, lo, hi int64) int64 { return lo + r.Int64N(hi-lo+1) }

// quietMachine is a quiet bare-metal machine's wake-ups: a body of a few
// µs and, now and then, a spike of tens of µs, its parameters drawn once.
func quietMachine(r *rand.Rand) func() int64 {
	lo := uniform(r, 1*us, 4*us)
	hi := lo + uniform(r, 3*us, 12*us)
	spikeEvery := uniform(r, 200, 1000)
	spikeLo := uniform(r, 20*us, 50*us)
	spikeHi := spikeLo + uniform(r, 5*us, 20*us)
	return func() int64 {
		if r.Int64N(spikeEvery) == 0 {
			return uniform(r, spikeLo, spikeHi)
		}
		return uniform(r, lo, hi)
	}
}

// busyMachine is a machine busy with other work: a body of tens of µs, a
// few per cent of wake-ups at 100–300 µs, and about 1 % that lost the
// CPU for 0.3–3 ms.
func busyMachine(r *rand.Rand) func() int64 {
	lo := uniform(r, 15*us, 30*us)
	hi := lo + uniform(r, 30*us, 70*us)
	mid := uniform(r, 200, 800)   // per 10,000
	stalls := uniform(r, 30, 150) // per 10,000
	return func() int64 {
		switch x := r.Int64N(10000); {
		case x < stalls:
			return uniform(r, 300*us, 3000*us)
		case x < stalls+mid:
			return uniform(r, 100*us, 300*us)
		}
		return uniform(r, lo, hi)
	}
}

func fill(n int, f func(i int) int64) []int64 {
	late := make([]int64, n)
	for i := range late {
		late[i] = f(i)
	}
	return late
}

// families are the kinds of machine the default is chosen on and must
// keep its promise on. Each is a model, SIMULATED: what they are built
// from is said beside each.
var families = []family{
	{name: "quiet", quiet: true, long: true, gen: func(r *rand.Rand, n int, _ int64) []int64 {
		quiet := quietMachine(r)
		return fill(n, func(int) int64 { return quiet() })
	}},
	// A bare-metal machine whose firmware stalls it at a fixed interval
	// (system management interrupts: 0.3–3 s apart, 50–500 µs long).
	{name: "firmware stall", quiet: true, long: true, gen: func(r *rand.Rand, n int, period int64) []int64 {
		quiet := quietMachine(r)
		every := max(uniform(r, 300, 3000)*int64(time.Millisecond)/period, 2)
		phase := r.Int64N(every)
		stall := uniform(r, 50*us, 500*us)
		return fill(n, func(i int) int64 {
			if int64(i)%every == phase {
				return stall + uniform(r, 0, stall/10)
			}
			return quiet()
		})
	}},
	{name: "busy", gen: func(r *rand.Rand, n int, _ int64) []int64 {
		busy := busyMachine(r)
		return fill(n, func(int) int64 { return busy() })
	}},
	// Quiet turning busy, or busy turning quiet, once.
	{name: "changing", gen: func(r *rand.Rand, n int, _ int64) []int64 {
		quiet, busy := quietMachine(r), busyMachine(r)
		at := int(uniform(r, int64(n)/5, int64(n)*4/5))
		first, second := quiet, busy
		if r.IntN(2) == 0 {
			first, second = busy, quiet
		}
		return fill(n, func(i int) int64 {
			if i < at {
				return first()
			}
			return second()
		})
	}},
	// Load that comes and goes: thousands of quiet wake-ups, then
	// thousands of busy ones, and again.
	{name: "load comes and goes", gen: func(r *rand.Rand, n int, _ int64) []int64 {
		quiet, busy := quietMachine(r), busyMachine(r)
		isBusy := r.IntN(2) == 0
		left := uniform(r, 1000, 5000)
		return fill(n, func(int) int64 {
			if left--; left == 0 {
				isBusy, left = !isBusy, uniform(r, 1000, 5000)
			}
			if isBusy {
				return busy()
			}
			return quiet()
		})
	}},
	// A CPU stolen in bursts (a hypervisor running another guest): runs of
	// 3–60 consecutive wake-ups late by 30–400 µs, on a quiet machine.
	{name: "stolen in bursts", gen: func(r *rand.Rand, n int, _ int64) []int64 {
		quiet := quietMachine(r)
		every := uniform(r, 300, 3000)
		left, level := int64(0), int64(0)
		return fill(n, func(int) int64 {
			if left == 0 && r.Int64N(every) == 0 {
				left, level = uniform(r, 3, 60), uniform(r, 30*us, 400*us)
			}
			if left > 0 {
				left--
				return level*7/10 + uniform(r, 0, level*6/10)
			}
			return quiet()
		})
	}},
	// A shared virtual machine like the one the recorded traces come from:
	// a body of 10–65 µs, and epochs of seconds in which 1–5 % of wake-ups
	// are 125 µs to 1 ms late.
	{name: "shared guest", gen: func(r *rand.Rand, n int, _ int64) []int64 {
		lo := uniform(r, 10*us, 25*us)
		hi := lo + uniform(r, 10*us, 40*us)
		noisy, left := r.IntN(3) == 0, uniform(r, 500, 3000)
		tail := uniform(r, 100, 500) // per 10,000 in a noisy epoch
		return fill(n, func(int) int64 {
			if left--; left == 0 {
				noisy, left = r.IntN(3) == 0, uniform(r, 500, 3000)
			}
			if x := r.Int64N(10000); (noisy && x < tail) || x < 10 {
				return uniform(r, 125*us, 1000*us)
			}
			return uniform(r, lo, hi)
		})
	}},
	// Windows' high-resolution waitable timer as published measurements
	// report it (a 0.5 ms wait ends 0.53–0.78 ms, in steps of about 0.5 ms:
	// rust-lang/rust#43376, Haukcode.HighResolutionTimer PR #18): tens to
	// a few hundred µs late, and 1–4 % a step later.
	{name: "windows-hr", windows: true, gen: func(r *rand.Rand, n int, _ int64) []int64 {
		lo := uniform(r, 20*us, 50*us)
		hi := uniform(r, 200*us, 350*us)
		step := uniform(r, 100, 400) // per 10,000
		return fill(n, func(int) int64 {
			l := uniform(r, lo, hi)
			if r.Int64N(10000) < step {
				l += 500 * us
			}
			return l
		})
	}},
}

// familyTraces draws family f's traces: each from its own seed, 1,500 to
// 10,000 wake-ups long (a short run is a program that has just started;
// 20,000 to 60,000 for the bare-metal families, whose spin is judged over
// a program's life), at 1 kHz or 500 Hz.
func familyTraces(fi int, count int) []trace {
	f := families[fi]
	traces := make([]trace, count)
	for j := range traces {
		r := rand.New(rand.NewPCG(uint64(fi+1), uint64(j+1)+*policySeed<<32))
		n := int(uniform(r, 1500, 10000))
		if f.long {
			n = int(uniform(r, 20000, 60000))
		}
		period := []int64{1000 * us, 2000 * us}[r.IntN(2)]
		tr := trace{name: fmt.Sprintf("%s #%d", f.name, j), family: f.name, fixed: 125 * us, ceiling: 500 * us, period: period}
		if f.windows {
			tr.fixed, tr.ceiling = 700*us, 4000*us
		}
		tr.late = f.gen(r, n, period)
		traces[j] = tr
	}
	return traces
}

// allTraces is every family's traces and the recorded ones.
func allTraces(t testing.TB, perFamily int) []trace {
	var traces []trace
	for fi := range families {
		traces = append(traces, familyTraces(fi, perFamily)...)
	}
	return append(traces, recordedTraces(t)...)
}

// policy is what the replay needs of a margin policy.
type policy interface {
	margin() int64
	observe(late int64)
}

type fixedPolicy int64

func (f fixedPolicy) margin() int64 { return int64(f) }
func (fixedPolicy) observe(int64)   {}

// onTrace starts p where the library starts on the trace's OS (spin_sleep's
// margin there), as the library's constructors do for the OS they run on.
func onTrace(p *marginPolicy, tr trace) *marginPolicy {
	p.start = min(tr.fixed, p.limit)
	p.current.Store(p.start)
	return p
}

// schedule is a Ticker's: catchUp delivers a tick less than a period late
// at once (Skip, the default); otherwise a tick already due when the wait
// begins is skipped (SkipLate, the measurement loop's).
type schedule bool

const (
	catchUp  schedule = true
	skipLate schedule = false
)

func (s schedule) String() string {
	if s == catchUp {
		return "catch-up"
	}
	return "skip-late"
}

type loopOutcome struct {
	p50, p99, max int64   // lateness of the ticks delivered, ns
	spin          float64 // ns spun per wake-up of the trace
	skipped       int     // ticks skipped (SkipLate) or dropped (Skip)
}

// replayLoop keeps a periodic loop of tr.period over the trace with policy
// p under schedule s (see the top of this file).
func replayLoop(p policy, tr trace, s schedule) loopOutcome {
	period := tr.period
	now, next := int64(0), period
	late := make([]int64, 0, len(tr.late))
	var spin int64
	skipped := 0
	for _, l := range tr.late {
		if s == catchUp {
			if next <= now-period {
				behind := (now - next) / period
				skipped += int(behind)
				next += behind * period
			}
		} else if next <= now {
			behind := (now-next)/period + 1
			skipped += int(behind)
			next += behind * period
		}
		due := next
		if wake := due - p.margin(); wake > now {
			now = wake + max(l, 0)
			p.observe(l)
		}
		if now < due {
			spin += due - now
			now = due
		}
		late = append(late, now-due)
		next = due + period
	}
	slices.Sort(late)
	n := len(late)
	return loopOutcome{p50: late[n/2], p99: late[(n*99+99)/100-1], max: late[n-1], spin: float64(spin) / float64(n), skipped: skipped}
}

// verdict is a policy's replay of one trace under one schedule, beside
// the fixed margin's.
type verdict struct {
	tr         trace
	s          schedule
	got, fixed loopOutcome
	broken     []string
	excess     int64   // p99 − the fixed margin's p99, ns
	spinRatio  float64 // spin / the fixed margin's spin
}

// judge replays p (made fresh by mk) and the fixed margin on tr under s
// and says where p breaks the promise.
func judge(mk func(trace) policy, tr trace, s schedule) verdict {
	v := verdict{tr: tr, s: s, got: replayLoop(mk(tr), tr, s), fixed: replayLoop(fixedPolicy(tr.fixed), tr, s)}
	v.excess = v.got.p99 - v.fixed.p99
	if v.fixed.spin > 0 {
		v.spinRatio = v.got.spin / v.fixed.spin
	}
	if v.excess > us {
		v.broken = append(v.broken, fmt.Sprintf("p99 %v, the fixed margin's %v", time.Duration(v.got.p99), time.Duration(v.fixed.p99)))
	}
	if v.got.spin > v.fixed.spin {
		v.broken = append(v.broken, fmt.Sprintf("spins %v a wake-up, the fixed margin %v", time.Duration(v.got.spin), time.Duration(v.fixed.spin)))
	}
	if quietFamily(tr.family) && v.spinRatio > 0.25 {
		v.broken = append(v.broken, fmt.Sprintf("spins %.0f %% of the fixed margin's on a quiet machine", 100*v.spinRatio))
	}
	return v
}

func quietFamily(name string) bool {
	for _, f := range families {
		if f.name == name {
			return f.quiet
		}
	}
	return false
}

// worst is the worst case of one policy over a family's traces.
type worst struct {
	traces          int
	excess          int64 // largest p99 excess over the fixed margin's, ns
	excessTrace     string
	spinRatio       float64 // largest spin ratio
	medianSpinRatio float64
	broken          int // traces (× schedules) where a promise broke
}

func worstOf(vs []verdict) worst {
	w := worst{excess: -1 << 62}
	ratios := make([]float64, 0, len(vs))
	for _, v := range vs {
		w.traces++
		if v.excess > w.excess {
			w.excess, w.excessTrace = v.excess, v.tr.name+" ("+v.s.String()+")"
		}
		w.spinRatio = max(w.spinRatio, v.spinRatio)
		ratios = append(ratios, v.spinRatio)
		if len(v.broken) > 0 {
			w.broken++
		}
	}
	slices.Sort(ratios)
	if len(ratios) > 0 {
		w.medianSpinRatio = ratios[len(ratios)/2]
	}
	return w
}

// familyNames lists the families in order, the recorded traces last.
func familyNames() []string {
	var names []string
	for _, f := range families {
		names = append(names, f.name)
	}
	return append(names, "recorded")
}

// judgeAll replays mk on every trace under both schedules, by family.
func judgeAll(mk func(trace) policy, traces []trace) map[string][]verdict {
	byFamily := map[string][]verdict{}
	for _, tr := range traces {
		for _, s := range []schedule{catchUp, skipLate} {
			byFamily[tr.family] = append(byFamily[tr.family], judge(mk, tr, s))
		}
	}
	return byFamily
}

func theDefault(tr trace) policy { return onTrace(newDefaultPolicy(tr.fixed), tr) }

// TestMarginPolicyFamilies replays the default on every family's traces
// (40 each, drawn afresh from their seeds) and the recorded ones, under
// both schedules, and asserts its promise on every one, except on as many
// as knownBreaks allows in the families where no policy of the cross-
// validation kept it everywhere. With -policy-table it prints the worst
// case per family, and what each schedule costs.
func TestMarginPolicyFamilies(t *testing.T) {
	perFamily := cmp.Or(*policyTraces, 40)
	traces := allTraces(t, perFamily)
	byFamily := judgeAll(theDefault, traces)
	// The allowance is for the traces the default was chosen on; on others
	// the breaks are reported.
	chosenOn := *policySeed == 0 && perFamily == 40
	for _, name := range familyNames() {
		var broken []string
		for _, v := range byFamily[name] {
			for _, b := range v.broken {
				broken = append(broken, fmt.Sprintf("%s, %s: the default %s", v.tr.name, v.s, b))
			}
		}
		if !chosenOn {
			t.Logf("%s: the promise broken %d times:\n%s", name, len(broken), strings.Join(broken, "\n"))
		} else if len(broken) > knownBreaks[name] {
			t.Errorf("%s: the promise broken %d times, at most %d allowed:\n%s", name, len(broken), knownBreaks[name], strings.Join(broken, "\n"))
		}
	}
	// The check can fail: the previous default breaks it beyond what is
	// allowed.
	previous := judgeAll(func(tr trace) policy { return onTrace(newPolicy(previousDefault, tr.fixed), tr) }, traces)
	if chosenOn && !exceedsKnownBreaks(previous) {
		t.Error("the previous default kept within the allowed breaks on every family: the check no longer tells policies apart")
	}
	if !*policyTable {
		return
	}
	fmt.Printf("\nThe default against spin_sleep's fixed margin, closed-loop replay, worst case per family (%d traces a family from seed %d, both schedules):\n\n", perFamily, *policySeed)
	fmt.Println("| family | traces | worst p99 − fixed's (µs) | on | worst spin / fixed's | median spin / fixed's | promise broken (of traces × 2 schedules) |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- |")
	for _, name := range familyNames() {
		w := worstOf(byFamily[name])
		fmt.Printf("| %s | %d | %+.1f | %s | %.0f %% | %.0f %% | %d |\n", name, w.traces/2, float64(w.excess)/1e3, w.excessTrace, 100*w.spinRatio, 100*w.medianSpinRatio, w.broken)
	}
	fmt.Println("\nThe previous default, the same way:\n\n| family | worst p99 − fixed's (µs) | worst spin / fixed's | median spin / fixed's | promise broken |\n| --- | --- | --- | --- | --- |")
	for _, name := range familyNames() {
		w := worstOf(previous[name])
		fmt.Printf("| %s | %+.1f | %.0f %% | %.0f %% | %d |\n", name, float64(w.excess)/1e3, 100*w.spinRatio, 100*w.medianSpinRatio, w.broken)
	}
	printSchedules(traces)
	printWithTail(traces)
}

// printWithTail prints what WithTail(0.999) buys: per family, the median
// over its traces of the p99 lateness and of the spin against the fixed
// margin's, for it and the default (the Ticker's catch-up schedule).
func printWithTail(traces []trace) {
	fmt.Printf("\nWithTail(0.999) against the default, catch-up schedule: p99 lateness (µs) and spin / the fixed margin's, medians over the family\n\n")
	fmt.Println("| family | default p99 | WithTail(0.999) p99 | default spin | WithTail(0.999) spin |")
	fmt.Println("| --- | --- | --- | --- | --- |")
	median := func(xs []float64) float64 { slices.Sort(xs); return xs[len(xs)/2] }
	for _, name := range familyNames() {
		var p99s, spins [2][]float64
		for _, tr := range traces {
			if tr.family != name {
				continue
			}
			fixed := replayLoop(fixedPolicy(tr.fixed), tr, catchUp)
			for i, p := range []policy{theDefault(tr), onTrace(newMarginPolicy(0.999, tr.ceiling, calWindow), tr)} {
				o := replayLoop(p, tr, catchUp)
				p99s[i] = append(p99s[i], float64(o.p99)/1e3)
				spins[i] = append(spins[i], o.spin/fixed.spin)
			}
		}
		fmt.Printf("| %s | %.1f | %.1f | %.0f %% | %.0f %% |\n", name, median(p99s[0]), median(p99s[1]), 100*median(spins[0]), 100*median(spins[1]))
	}
}

// knownBreaks is how many trace-schedules of a family the default breaks
// the promise on, where no policy of the cross-validation kept it on every
// one (BENCHMARKS.md says where and what keeping it would cost): on the
// first tail after a quiet stretch longer than the warm-up (a CPU stolen
// in bursts, a machine turning busy), which no policy that has gone below
// the cap can foresee; on traces whose fixed margin is itself late on
// about 1 % of ticks, where the quiet stretches' rare spikes that a p99
// margin does not cover are enough to move the p99; and, for the 25 %
// spin target, on bare metal stalled by its firmware more than every
// half second, where the peak that covers bursts at once spins after each
// stall. Elsewhere it must hold everywhere. The counts are the default's
// on the traces it was chosen on (seed 0): a change that breaks more
// fails.
var knownBreaks = map[string]int{"firmware stall": 4, "changing": 10, "load comes and goes": 7, "stolen in bursts": 4}

func exceedsKnownBreaks(byFamily map[string][]verdict) bool {
	for name, vs := range byFamily {
		n := 0
		for _, v := range vs {
			if len(v.broken) > 0 {
				n++
			}
		}
		if n > knownBreaks[name] {
			return true
		}
	}
	return false
}

// printSchedules prints what each schedule costs, per family: the fixed
// margin's and the default's p99 under each (median and worst over the
// family), and the share of ticks skip-late drops.
func printSchedules(traces []trace) {
	fmt.Printf("\nThe two schedules, closed-loop replay: p99 lateness (µs, median / worst over the family) and ticks not delivered (%% of ticks, worst)\n\n")
	fmt.Println("| family | fixed, catch-up | fixed, skip-late | default, catch-up | default, skip-late | dropped, catch-up | skipped, skip-late |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- |")
	for _, name := range familyNames() {
		var cells [4][]int64
		var dropped [2]float64
		for _, tr := range traces {
			if tr.family != name {
				continue
			}
			for si, s := range []schedule{catchUp, skipLate} {
				f, d := replayLoop(fixedPolicy(tr.fixed), tr, s), replayLoop(theDefault(tr), tr, s)
				cells[si] = append(cells[si], f.p99)
				cells[2+si] = append(cells[2+si], d.p99)
				dropped[si] = max(dropped[si], 100*float64(d.skipped)/float64(len(tr.late)))
			}
		}
		fmt.Printf("| %s |", name)
		for _, c := range [][]int64{cells[0], cells[1], cells[2], cells[3]} {
			slices.Sort(c)
			fmt.Printf(" %.1f / %.1f |", float64(c[len(c)/2])/1e3, float64(c[len(c)-1])/1e3)
		}
		fmt.Printf(" %.2f %% | %.2f %% |\n", dropped[0], dropped[1])
	}
}

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

// BenchmarkMarginObserve is the bookkeeping a wait leaves for later.
func BenchmarkMarginObserve(b *testing.B) {
	p := newMarginPolicy(DefaultTail, initialMargin, calWindow)
	for i := 0; b.Loop(); i++ {
		p.observe(int64(i%97) * us)
	}
}

// previousDefault is the default of the round before: its p99 was up to
// 1.4 µs worse than the fixed margin's on held-out traces of load that
// comes and goes and of a CPU stolen in bursts.
var previousDefault = policyConfig{tail: DefaultTail, guard: defaultGuardPrevious, warmup: calWindow, peakShift: 5}

// defaultGuardPrevious is the previous default's guard: p99.8.
const defaultGuardPrevious = 9980
