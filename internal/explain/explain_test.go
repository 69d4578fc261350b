package explain

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/attribution"
	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/procstat"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

func TestChoose(t *testing.T) {
	for _, c := range []struct {
		asked    Layer
		canTrace bool
		want     Layer
		err      bool
	}{
		{LayerAuto, true, Layer1, false},
		{LayerAuto, false, Layer0, false},
		{Layer0, true, Layer0, false},
		{Layer1, true, Layer1, false},
		{Layer1, false, 0, true},
	} {
		got, err := Choose(c.asked, c.canTrace, "not root")
		var le *LayerError
		if c.err != errors.As(err, &le) {
			t.Errorf("Choose(%d, %v): error %v", c.asked, c.canTrace, err)
			continue
		}
		if !c.err && (got.Layer != c.want || got.Why == "") {
			t.Errorf("Choose(%d, %v) = %+v, want layer %d with a reason", c.asked, c.canTrace, got, c.want)
		}
		if c.asked == LayerAuto && !c.canTrace && !strings.Contains(got.Why, "not root") {
			t.Errorf("layer 0 by default does not say why: %q", got.Why)
		}
	}
}

func TestParseLayerAndCheck(t *testing.T) {
	for in, want := range map[string]Layer{"auto": LayerAuto, "": LayerAuto, "0": Layer0, "1": Layer1} {
		if got, err := ParseLayer(in); err != nil || got != want {
			t.Errorf("ParseLayer(%q) = %d, %v", in, got, err)
		}
	}
	var u *options.UsageError
	if _, err := ParseLayer("2"); !errors.As(err, &u) || !strings.Contains(err.Error(), "layer") {
		t.Errorf("ParseLayer(2): %v, want a usage error naming --layer", err)
	}
	ok := Options{Worst: 10, Layer: LayerAuto}
	for _, bad := range []Options{{Worst: 0}, {Worst: 10, Over: -1}, {Worst: 10, Over: MaxOver + 1}, {Worst: MaxWorst + 1}, {Worst: 1, Layer: 5}} {
		if err := bad.Check(); !errors.As(err, &u) {
			t.Errorf("%+v: %v, want a usage error", bad, err)
		}
	}
	if err := ok.Check(); err != nil {
		t.Error(err)
	}
}

func TestThreshold(t *testing.T) {
	late := make([]int64, 100)
	for i := range late {
		late[i] = int64(100 - i) // 1..100, reversed
	}
	if ns, from := Threshold(late, 0); ns != 99 || from != "p99" {
		t.Errorf("p99 = %d from %s, want 99", ns, from)
	}
	if ns, from := Threshold(late, 5*time.Microsecond); ns != 5000 || from != "--over" {
		t.Errorf("--over = %d from %s", ns, from)
	}
}

func TestFindStart(t *testing.T) {
	starts := []attribution.Event{{Time: 10}, {Time: 20}, {Time: 25}, {Time: 40}}
	for _, c := range []struct {
		from, to, want int64
		ok             bool
	}{
		{15, 30, 25, true}, {0, 10, 10, true}, {26, 39, 0, false}, {41, 50, 0, false},
	} {
		got, ok := findStart(starts, c.from, c.to)
		if ok != c.ok || ok && got.Time != c.want {
			t.Errorf("findStart(%d, %d) = %d, %v", c.from, c.to, got.Time, ok)
		}
	}
}

// judge at layer 0: only the waits over the threshold, worst first, each
// wait's causes adding up to its lateness, armed late said apart.
func TestJudgeLayer0(t *testing.T) {
	ss := func(wait uint64) procstat.SchedStat { return procstat.SchedStat{WaitNS: wait} }
	waits := []waitRec{
		{Deadline: 1000, Start: 0, End: 1010, Before: ss(0), After: ss(0), SchedOK: true},                  // 10 late: under
		{Deadline: 2000, Start: 1010, End: 2900, Before: ss(0), After: ss(800), SchedOK: true},             // 900 late, 800 run queue
		{Deadline: 3000, Start: 3100, End: 3600, SchedOK: false},                                           // armed late
		{Deadline: 4000, Start: 3600, End: 6000, Before: ss(800), After: ss(2800), SchedOK: true},          // 2000 late
		{Deadline: 5000, Start: 6000 - 2000, End: 5500, Before: ss(2800), After: ss(2800), SchedOK: false}, // 500, no schedstat
	}
	res := &Result{Layer: 0, SlackNs: 50, Late: []LateWait{}}
	judge(res, 7, waits, Options{Over: 100}, nil, nil)
	if len(res.Late) != 4 {
		t.Fatalf("%d late waits, want 4: %+v", len(res.Late), res.Late)
	}
	if res.Late[0].Index != 3 || res.Late[0].LatenessNs != 2000 {
		t.Errorf("worst is %+v, want wait 3, 2000 ns", res.Late[0])
	}
	for _, l := range res.Late {
		var sum int64
		for _, c := range l.Causes {
			sum += c.Ns
		}
		if sum != l.LatenessNs {
			t.Errorf("wait %d: causes add to %d, lateness %d", l.Index, sum, l.LatenessNs)
		}
	}
	g := res.Aggregate
	if g.ArmedLate != 1 || g.Late != 3 || g.LatenessNs != 900+2000+500 {
		t.Errorf("aggregate %+v", g)
	}
	if g.Causes[0].Cause != string(attribution.KindRunQueue) || g.Causes[0].Ns != 800+1950 {
		t.Errorf("worst cause %+v, want run-queue wait 2750", g.Causes[0])
	}
}

// judge at layer 1: a wait is matched to its thread's hrtimer_start, and
// one without is not attributed.
func TestJudgeLayer1(t *testing.T) {
	const tid = 42
	evs := []attribution.Event{
		{Time: 100, CPU: 0, Kind: attribution.HrtimerStart, PID: tid, Hrtimer: 1, Expires: 1050, SoftExpires: 1000},
		{Time: 150, CPU: 0, Kind: attribution.HrtimerStart, PID: 99, Hrtimer: 2, Expires: 1100, SoftExpires: 1100},
	}
	waits := []waitRec{{Deadline: 1000, Start: 90, End: 1500}, {Deadline: 3000, Start: 2000, End: 3500}}
	res := &Result{Layer: 1, Late: []LateWait{}}
	judge(res, tid, waits, Options{Over: 100}, evs, nil)
	if len(res.Late) != 2 {
		t.Fatalf("%d late, want 2", len(res.Late))
	}
	for _, l := range res.Late {
		if l.Index == 1 && !l.NotAttributed {
			t.Errorf("wait without a traced timer attributed: %+v", l)
		}
		if l.Index == 0 && (l.NotAttributed || l.LatenessNs != 500) {
			t.Errorf("wait 0: %+v, want 500 ns attributed", l)
		}
	}
}

// Every outside name reaches the text made printable.
func TestTextNamesPrintable(t *testing.T) {
	hostile := "evil\x1b[2J\n"
	r := &Result{Layer: 1, LayerWhy: "test", Late: []LateWait{{Causes: []Cause{{Cause: "thread", Name: hostile + ":1", Ns: 10, Share: 1}, {Cause: "IRQ delay", Context: "cpu0 running " + hostile + ":1", Ns: 10, Share: 1}}, LatenessNs: 10}},
		Aggregate: Aggregate{Late: 1, LatenessNs: 10, Causes: []Share{{Cause: "thread", Ns: 10, Share: 1, Names: []Name{{Name: hostile, Ns: 10, Share: 1}}}, {Cause: "IRQ delay", Ns: 10, Share: 1, Contexts: []Context{{Context: "cpu0 running " + hostile + ":1", Ns: 10, Share: 1, Waits: 1}}}}, Names: []Name{{Name: hostile, Ns: 10, Share: 1}}},
		Window:    &Window{Interrupts: []Count{{Name: "24", Desc: "chip " + hostile, Count: 3}}},
		Trace:     &TraceInfo{Instance: "/x", Missing: []string{}}}
	var b bytes.Buffer
	r.WriteText(&b, 10)
	if strings.ContainsAny(b.String(), "\x1b") {
		t.Errorf("text holds an ESC:\n%q", b.String())
	}
	for _, want := range []string{"layer 1", "threshold", "by cause", "by context", "by name"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}

// The text says what became of a tracefs the run mounted: unmounted, or
// left mounted because it was in use.
func TestTextTracefsMount(t *testing.T) {
	for _, tc := range []struct {
		info      TraceInfo
		want, not string
	}{
		{TraceInfo{Mounted: true}, "mounted for the run and unmounted after", "left mounted"},
		{TraceInfo{Mounted: true, LeftMounted: "/sys/kernel/tracing"}, "tracefs left mounted at /sys/kernel/tracing: in use", "unmounted after"},
		{TraceInfo{LeftMounted: "/sys/kernel/tracing"}, "tracefs left mounted at /sys/kernel/tracing: in use", "mounted for the run"},
		{TraceInfo{}, "", "mounted"},
	} {
		tc.info.Instance, tc.info.Missing = "/x", []string{}
		r := &Result{Layer: 1, LayerWhy: "test", Trace: &tc.info}
		var b bytes.Buffer
		r.WriteText(&b, 10)
		if !strings.Contains(b.String(), tc.want) || strings.Contains(b.String(), tc.not) {
			t.Errorf("%+v: want %q and not %q in:\n%s", tc.info, tc.want, tc.not, b.String())
		}
	}
}

// A trace's kind follows what it names: a tracefs instance's directory,
// or an ETW session's name.
func TestTraceInfoKind(t *testing.T) {
	for in, want := range map[string]string{"/sys/kernel/tracing/instances/tickscope-explain": "instance", "tickscope-explain": "ETW session"} {
		if got := (TraceInfo{Instance: in}).Kind(); got != want {
			t.Errorf("%q: kind %q, want %q", in, got, want)
		}
	}
}

// A fake host on a virtual clock, each wait late by its scripted amount,
// and a fake System whose thread's run-queue wait grows by each wait's
// lateness: Run gives run-queue wait as the whole explained part.
type fakeHost struct {
	now   int64
	late  []int64
	waits int
	sys   *fakeSystem
}

func (h *fakeHost) Query() (*timerinfo.Report, error) { return &timerinfo.Report{OS: "fake"}, nil }
func (h *fakeHost) Methods() []seam.Method {
	return []seam.Method{{Name: "fake", Schedule: seam.Periodic}}
}
func (h *fakeHost) Now() int64                      { return h.now }
func (h *fakeHost) PrepareThread() (string, func()) { return "p", func() {} }
func (h *fakeHost) Observe() seam.Observation       { return seam.Observation{} }
func (h *fakeHost) NewWaiter(string, time.Duration) (seam.Waiter, error) {
	return h, nil
}
func (h *fakeHost) Apply(s timerinfo.Setting) (timerinfo.Setting, func() error, error) {
	return s, func() error { return nil }, nil
}
func (h *fakeHost) Wait(deadline int64) error {
	l := h.late[h.waits%len(h.late)]
	if h.sys.recording {
		l += h.sys.recordCost
	}
	h.waits++
	h.now = max(h.now, deadline) + l
	h.sys.runQueue += uint64(l)
	return nil
}
func (h *fakeHost) Close() error           { return nil }
func (h *fakeHost) CPUTime() time.Duration { return 0 }

type fakeSystem struct {
	runQueue uint64
	trace    bool
	// With a trace: recording is its state, recordCost what it adds to
	// each wait, toggles how often Record changed it.
	recording  bool
	recordCost int64
	toggles    int
	// countersErr is what Counters returns; untraced the trace's
	// Untraced CPUs.
	countersErr error
	untraced    []int
	started     bool
}

func (s *fakeSystem) CanTrace() (bool, string) { return s.trace, "fake: no tracing" }
func (s *fakeSystem) StartTrace(context.Context, func()) (Trace, error) {
	if !s.trace {
		return nil, errors.New("fake: no tracing")
	}
	s.recording, s.started = true, true
	return fakeTrace{s}, nil
}

// fakeTrace records nothing: every traced wait is not attributed.
type fakeTrace struct{ s *fakeSystem }

func (t fakeTrace) Info() TraceInfo {
	return TraceInfo{Instance: "fake", Missing: []string{}, UntracedCPUs: t.s.untraced}
}
func (t fakeTrace) Record(on bool) error {
	if on != t.s.recording {
		t.s.toggles++
	}
	t.s.recording = on
	return nil
}
func (t fakeTrace) Stop() ([]attribution.Event, []attribution.Gap, error) {
	t.s.recording = false
	return nil, nil, nil
}
func (fakeTrace) Close() error                             { return nil }
func (s *fakeSystem) Counters() (procstat.Snapshot, error) { return procstat.Snapshot{}, s.countersErr }
func (s *fakeSystem) Thread() (Thread, error)              { return fakeThread{s}, nil }

type fakeThread struct{ s *fakeSystem }

func (fakeThread) TID() int { return 1 }
func (t fakeThread) SchedStat() (procstat.SchedStat, error) {
	return procstat.SchedStat{WaitNS: t.s.runQueue}, nil
}

func TestRunOnFakes(t *testing.T) {
	sys := &fakeSystem{}
	h := &fakeHost{late: []int64{1000, 1000, 1000, 1000, 500_000}, sys: sys}
	res, file, err := Run(context.Background(), h, &timerinfo.Report{OS: "fake"}, sys, Options{Delay: time.Millisecond, Samples: 100, Over: 100 * time.Microsecond, Layer: LayerAuto, Worst: 10}, Reporting{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Layer != 0 || !strings.Contains(res.LayerWhy, "fake: no tracing") {
		t.Errorf("layer %d (%s), want 0 saying why", res.Layer, res.LayerWhy)
	}
	if res.Waits != 100 || len(res.Late) != 20 || file.Command != "measure" || len(file.Points[0].Latencies) != 100 {
		t.Errorf("waits %d, late %d, file %s with %d samples", res.Waits, len(res.Late), file.Command, len(file.Points[0].Latencies))
	}
	if g := res.Aggregate; len(g.Causes) == 0 || g.Causes[0].Cause != string(attribution.KindRunQueue) || g.ExplainedShare != 1 {
		t.Errorf("aggregate %+v: want run-queue wait, all explained", g)
	}
	// Layer 1 asked for where it cannot run: a LayerError, nothing measured.
	h.waits = 0
	_, _, err = Run(context.Background(), h, &timerinfo.Report{OS: "fake"}, sys, Options{Delay: time.Millisecond, Samples: 10, Layer: Layer1, Worst: 10}, Reporting{})
	var le *LayerError
	if !errors.As(err, &le) || h.waits != 0 {
		t.Errorf("layer 1 without tracing: %v after %d waits", err, h.waits)
	}
	// The flight recorder asks for layer 1 when --layer does not: the
	// error says so.
	_, _, err = Run(context.Background(), h, &timerinfo.Report{OS: "fake"}, sys, Options{Delay: time.Millisecond, Samples: 10, Layer: LayerAuto, Over: time.Millisecond, FlightRecorder: true, Worst: 10}, Reporting{})
	if !errors.As(err, &le) || err.Error() != "layer 1, which --flight-recorder needs, cannot run here: fake: no tracing" || h.waits != 0 {
		t.Errorf("--flight-recorder without tracing: %v after %d waits", err, h.waits)
	}
}

// By name holds who did it only (threads, IRQs, softirqs): where an IRQ
// delay happened (its CPU, the thread or idle state it found) and an idle
// exit's CPU are contexts, kept per wait and in their own table.
func TestByNameHoldsOnlyNames(t *testing.T) {
	const tid = 42
	start := func(first attribution.Event) []attribution.Event {
		return []attribution.Event{
			{Time: 100, CPU: 0, Kind: attribution.HrtimerStart, PID: tid, Hrtimer: 1, SoftExpires: 1000, Expires: 1000, TargetCPU: -1},
			first,
		}
	}
	timerIRQ := []attribution.Event{
		{Time: 1300, CPU: 0, Kind: attribution.VectorEntry, Name: "LOC", IRQ: 236, TargetCPU: -1},
		{Time: 1305, CPU: 0, Kind: attribution.HrtimerExpireEntry, Hrtimer: 1, TargetCPU: -1},
		{Time: 1310, CPU: 0, Kind: attribution.Waking, TargetPID: tid, TargetCPU: 0, Name: "waiter"},
		{Time: 1315, CPU: 0, Kind: attribution.Wakeup, TargetPID: tid, TargetCPU: 0, Name: "waiter"},
		{Time: 1320, CPU: 0, Kind: attribution.HrtimerExpireExit, Hrtimer: 1, TargetCPU: -1},
		{Time: 1330, CPU: 0, Kind: attribution.VectorExit, Name: "LOC", IRQ: 236, TargetCPU: -1},
	}
	sw := func(at int64, prev int, prevComm string, next int, nextComm string) attribution.Event {
		return attribution.Event{Time: at, CPU: 0, Kind: attribution.Switch, PrevPID: prev, PrevComm: prevComm, NextPID: next, NextComm: nextComm, TargetCPU: -1}
	}
	for _, c := range []struct {
		name     string
		evs      []attribution.Event
		names    []string
		contexts []string // cause/context
	}{
		{
			name: "IRQ delay on an idle CPU",
			evs: slices.Concat(start(sw(110, tid, "waiter", 0, "swapper/0")), timerIRQ,
				[]attribution.Event{sw(1350, 0, "swapper/0", tid, "waiter")}),
			names:    []string{"LOC"},
			contexts: []string{"IRQ delay/cpu0 idle", "idle exit/cpu0"},
		},
		{
			name: "IRQ delay in an idle state",
			evs: slices.Concat(start(sw(110, tid, "waiter", 0, "swapper/0")),
				[]attribution.Event{{Time: 120, CPU: 0, Kind: attribution.CPUIdle, State: 2, TargetCPU: -1}}, timerIRQ,
				[]attribution.Event{{Time: 1340, CPU: 0, Kind: attribution.CPUIdle, State: attribution.IdleExit, TargetCPU: -1}, sw(1350, 0, "swapper/0", tid, "waiter")}),
			names:    []string{"LOC"},
			contexts: []string{"IRQ delay/cpu0 in idle state 2", "idle exit/cpu0"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := &Result{Layer: 1, Late: []LateWait{}}
			judge(res, tid, []waitRec{{Deadline: 1000, Start: 90, End: 1400}}, Options{Over: 1}, c.evs, nil)
			var names, contexts []string
			for _, n := range res.Aggregate.Names {
				names = append(names, n.Name)
			}
			for _, s := range res.Aggregate.Causes {
				for _, x := range s.Contexts {
					contexts = append(contexts, s.Cause+"/"+x.Context)
				}
			}
			if !slices.Equal(names, c.names) {
				t.Errorf("by name %q, want %q", names, c.names)
			}
			if !slices.Equal(contexts, c.contexts) {
				t.Errorf("contexts %q, want %q", contexts, c.contexts)
			}
			var perWait []string
			for _, x := range res.Late[0].Causes {
				if x.Context != "" {
					perWait = append(perWait, x.Cause+"/"+x.Context)
				}
			}
			if !slices.Equal(perWait, c.contexts) {
				t.Errorf("the wait's contexts %q, want %q", perWait, c.contexts)
			}
			var b bytes.Buffer
			res.WriteText(&b, 10)
			text := b.String()
			_, byName, _ := strings.Cut(text, "\nby name:\n")
			byName, _, _ = strings.Cut(byName, "\n\n")
			if strings.Contains(byName, "cpu") {
				t.Errorf("by name holds a context:\n%s", byName)
			}
			if !strings.Contains(text, "\nby context (") {
				t.Errorf("no context table:\n%s", text)
			}
		})
	}
}

// A traced run interleaves untraced chunks: the waits explained are the
// traced ones, as many as asked for; the untraced ones measure what
// recording costs, side by side.
func TestObserverEffectInterleaved(t *testing.T) {
	sys := &fakeSystem{trace: true, recordCost: 2000}
	h := &fakeHost{late: []int64{1000}, sys: sys}
	res, file, err := Run(context.Background(), h, &timerinfo.Report{OS: "fake"}, sys, Options{Delay: time.Millisecond, Samples: 100, Over: 2 * time.Microsecond, Layer: Layer1, Worst: 10}, Reporting{})
	if err != nil {
		t.Fatal(err)
	}
	e := res.ObserverEffect
	if e == nil {
		t.Fatal("no observer effect at layer 1")
	}
	// Chunks of 10 traced then 5 untraced: 10 of each, 150 waits.
	if e.ChunkWaits != 10 || e.OffWaits != 5 || e.Traced != 100 || e.Untraced != 50 || len(file.Points[0].Latencies) != 150 {
		t.Errorf("%+v with %d samples", e, len(file.Points[0].Latencies))
	}
	// Off before each untraced chunk, on after each but the last, which
	// ends the run.
	if sys.toggles != 19 {
		t.Errorf("recording toggled %d times, want 19", sys.toggles)
	}
	if e.TracedP50Ns != 3000 || e.UntracedP50Ns != 1000 || e.TracedP99Ns != 3000 || e.UntracedP99Ns != 1000 || !e.Changed || e.P50Diff.Estimate != 2000 {
		t.Errorf("%+v: want traced 3000, untraced 1000, changed", e)
	}
	if res.Waits != 100 || len(res.Late) != 100 || res.LatenessP50Ns != 3000 {
		t.Errorf("%d waits, %d late, p50 %d: want the 100 traced ones only", res.Waits, len(res.Late), res.LatenessP50Ns)
	}
	for _, l := range res.Late {
		if l.Index%15 >= 10 {
			t.Errorf("untraced wait %d explained", l.Index)
		}
	}
	var b bytes.Buffer
	res.WriteText(&b, 3)
	for _, want := range []string{"observer effect: 100 traced and 50 untraced waits", "lateness p50 3.0 µs traced, 1.0 µs untraced", "tracing made the p50"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	// Layer 0 has no observer effect: nothing is traced.
	sys0 := &fakeSystem{}
	res0, _, err := Run(context.Background(), &fakeHost{late: []int64{1000}, sys: sys0}, &timerinfo.Report{OS: "fake"}, sys0, Options{Delay: time.Millisecond, Samples: 20, Layer: LayerAuto, Worst: 10}, Reporting{})
	if err != nil || res0.ObserverEffect != nil {
		t.Errorf("layer 0: %v, observer effect %+v", err, res0.ObserverEffect)
	}
}

func TestInterleavePlan(t *testing.T) {
	for _, c := range []struct{ samples, traced, off, total int }{
		{1, 10, 5, 1}, {50, 10, 5, 75}, {55, 10, 5, 80}, {1000, 100, 50, 1500}, {100000, 100, 50, 150000},
	} {
		p := planInterleave(c.samples)
		n := 0
		for i := range p.total(c.samples) {
			if p.traced(i) {
				n++
			}
		}
		if p.Traced != c.traced || p.Off != c.off || p.total(c.samples) != c.total || n != c.samples {
			t.Errorf("%d samples: %+v, total %d with %d traced", c.samples, p, p.total(c.samples), n)
		}
	}
}

// The stretches without recording are gaps on every CPU, from just after
// the traced wait before to the start of the traced wait after.
func TestObserverGaps(t *testing.T) {
	o := &observer{waits: []waitRec{
		{Start: 0, End: 10}, {Start: 10, End: 20, Untraced: true}, {Start: 20, End: 30, Untraced: true},
		{Start: 30, End: 40}, {Start: 40, End: 50, Untraced: true},
	}}
	want := []attribution.Gap{{CPU: attribution.AllCPUs, From: 11, To: 30}, {CPU: attribution.AllCPUs, From: 41, To: 50}}
	if got := o.gaps(); !slices.Equal(got, want) {
		t.Errorf("gaps %+v, want %+v", got, want)
	}
}

// TestCountersUnreadSaidOnce: counters that fail the same way before and
// after the waits are said once, in a note of one line; the window is
// null, not counts of zero, in the raw file too, and the text has no
// block for it.
func TestCountersUnreadSaidOnce(t *testing.T) {
	sys := &fakeSystem{countersErr: errors.New("no /proc here")}
	res, file, err := Run(context.Background(), &fakeHost{late: []int64{1000}, sys: sys}, &timerinfo.Report{OS: "fake"}, sys, Options{Delay: time.Millisecond, Samples: 10, Layer: LayerAuto, Worst: 1}, Reporting{})
	if err != nil {
		t.Fatal(err)
	}
	want := "the window's counters were not all read: no /proc here"
	if !slices.Contains(res.Notes, want) {
		t.Errorf("the notes %q lack %q", res.Notes, want)
	}
	if res.Window != nil {
		t.Errorf("window %+v, want none: nothing was read", res.Window)
	}
	var b bytes.Buffer
	res.WriteText(&b, 1)
	if strings.Contains(b.String(), "over the run") {
		t.Errorf("the text has the window's block:\n%s", b.String())
	}
	if file.Explain.Window != nil {
		t.Errorf("the raw file's window %+v, want none", file.Explain.Window)
	}
}

// A run that interleaves untraced chunks (layer 1 on tracefs) takes at
// most MaxTracedSamples, the most whose chunks keep the run within
// sample.MaxSamples; more is a usage error naming --samples before
// anything is traced or measured. Layer 0 takes sample.MaxSamples.
func TestSamplesAtLayer1(t *testing.T) {
	if p := planInterleave(MaxTracedSamples); p.total(MaxTracedSamples) > sample.MaxSamples || p.total(MaxTracedSamples+1) <= sample.MaxSamples {
		t.Errorf("MaxTracedSamples %d: total %d, and %d for one more; the most is %d", MaxTracedSamples, p.total(MaxTracedSamples), planInterleave(MaxTracedSamples+1).total(MaxTracedSamples+1), sample.MaxSamples)
	}
	for _, c := range []struct {
		samples  int
		layer    Layer
		canTrace bool
		bad      bool
	}{
		{MaxTracedSamples + 1, Layer1, true, true},
		{MaxTracedSamples + 1, LayerAuto, true, true},
		{sample.MaxSamples, LayerAuto, true, true},
		{MaxTracedSamples + 1, LayerAuto, false, false},
		{MaxTracedSamples + 1, Layer0, true, false},
		{MaxTracedSamples, Layer1, true, false},
	} {
		sys := &fakeSystem{trace: c.canTrace}
		h := &fakeHost{late: []int64{1000}, sys: sys}
		_, _, err := Run(context.Background(), h, &timerinfo.Report{OS: "fake"}, sys, Options{Delay: time.Millisecond, Samples: c.samples, Layer: c.layer, Worst: 10}, Reporting{})
		var u *options.UsageError
		switch {
		case c.bad && (!errors.As(err, &u) || !strings.Contains(err.Error(), "--samples") || h.waits != 0 || sys.started):
			t.Errorf("%+v: %v after %d waits (trace started %v), want a usage error naming --samples, nothing measured", c, err, h.waits, sys.started)
		case !c.bad && err != nil:
			t.Errorf("%+v: %v", c, err)
		}
	}
}

// judge takes a trace's events in any order: the waits' hrtimer_starts
// are found in time order, as the attribution reads them.
func TestJudgeUnsortedEvents(t *testing.T) {
	const tid = 42
	evs := []attribution.Event{
		{Time: 100, CPU: 0, Kind: attribution.HrtimerStart, PID: tid, Hrtimer: 1, Expires: 1000, SoftExpires: 1000},
		{Time: 2100, CPU: 0, Kind: attribution.HrtimerStart, PID: tid, Hrtimer: 1, Expires: 3000, SoftExpires: 3000},
	}
	waits := []waitRec{{Deadline: 1000, Start: 90, End: 1500}, {Deadline: 3000, Start: 2000, End: 3600}}
	run := func(evs []attribution.Event) *Result {
		res := &Result{Layer: 1, Late: []LateWait{}}
		judge(res, tid, waits, Options{Over: 100}, evs, nil)
		return res
	}
	want := run(slices.Clone(evs))
	slices.Reverse(evs)
	got := run(evs)
	if len(want.Late) != 2 || len(got.Late) != 2 {
		t.Fatalf("%d and %d late waits, want 2", len(want.Late), len(got.Late))
	}
	for i := range want.Late {
		if got.Late[i].NotAttributed || got.Late[i].LatenessNs != want.Late[i].LatenessNs {
			t.Errorf("late wait %d from unsorted events: %+v, from sorted: %+v", i, got.Late[i], want.Late[i])
		}
	}
}

// CPUs the process may not run on, which the trace left out, are said in
// a note, in ranges.
func TestUntracedCPUsSaid(t *testing.T) {
	for _, c := range []struct {
		untraced []int
		want     string
	}{
		{nil, ""},
		{[]int{1}, "CPU 1 not traced: this process could not run there as the trace began (its CPU affinity), and events there (an IRQ, a wake-up handled there) are not seen"},
		{[]int{0, 2, 3, 4, 7}, "CPUs 0,2-4,7 not traced: this process could not run there as the trace began (its CPU affinity), and events there (an IRQ, a wake-up handled there) are not seen"},
	} {
		sys := &fakeSystem{trace: true, untraced: c.untraced}
		res, _, err := Run(context.Background(), &fakeHost{late: []int64{1000}, sys: sys}, &timerinfo.Report{OS: "fake"}, sys, Options{Delay: time.Millisecond, Samples: 10, Layer: Layer1, Worst: 1}, Reporting{})
		if err != nil {
			t.Fatal(err)
		}
		said := slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "not traced") })
		if c.want == "" && said || c.want != "" && !slices.Contains(res.Notes, c.want) {
			t.Errorf("untraced %v: notes %q, want %q", c.untraced, res.Notes, c.want)
		}
	}
}
