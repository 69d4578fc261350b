package explain

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/attribution"
	"github.com/tickscope/tickscope/internal/etwkernel"
	"github.com/tickscope/tickscope/internal/procstat"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

func TestChooseETW(t *testing.T) {
	for _, c := range []struct {
		asked    Layer
		canTrace bool
		want     Layer
		errLayer Layer // -1: no error
		says     string
	}{
		{LayerAuto, true, Layer1, -1, etwkernel.SessionName},
		{Layer1, true, Layer1, -1, "--layer 1"},
		{LayerAuto, false, 0, Layer1, "elevated"},
		{Layer1, false, 0, Layer1, "elevated"},
		{Layer0, true, 0, Layer0, "ready to run"},
		{Layer0, false, 0, Layer0, "Run as administrator"},
	} {
		got, err := chooseETW(c.asked, c.canTrace, NeedsElevation)
		var le *LayerError
		switch {
		case c.errLayer < 0 && err != nil:
			t.Errorf("chooseETW(%d, %v): %v", c.asked, c.canTrace, err)
		case c.errLayer < 0 && (got.Layer != c.want || !strings.Contains(got.Why, c.says)):
			t.Errorf("chooseETW(%d, %v) = %+v, want layer %d saying %q", c.asked, c.canTrace, got, c.want, c.says)
		case c.errLayer >= 0 && (!errors.As(err, &le) || le.Layer != c.errLayer || !strings.Contains(err.Error(), c.says)):
			t.Errorf("chooseETW(%d, %v): %v, want a layer %d error saying %q", c.asked, c.canTrace, err, c.errLayer, c.says)
		}
	}
}

const (
	me       = 4321 // the measuring thread
	ndisBase = 0xfffff80001400000
	ms       = int64(time.Millisecond)
	usec     = int64(time.Microsecond)
)

func ndisImage() *etwkernel.ImageLoad {
	return &etwkernel.ImageLoad{Kind: etwkernel.ImageDCStart, ImageBase: ndisBase, ImageSize: 0x100000, FileName: `\SystemRoot\System32\drivers\ndis.sys`}
}

// lateSleep is the events of a Sleep(1) whose deadline is at deadline
// and whose expected tick, a 1 ms period after it, is at E = deadline +
// 1 ms: ready on cpu0 at E+100 µs after an ndis.sys DPC of 60 µs there,
// switched in on cpu1 at E+500 µs, where thread 99 at priority 15 ran
// from before the ready.
func lateSleep(deadline int64) []etwkernel.Event {
	E := deadline + ms
	c := func(cpu uint16, at int64) etwkernel.Common { return etwkernel.Common{CPU: cpu, At: at, Version: 2} }
	return []etwkernel.Event{
		&etwkernel.CSwitch{Common: c(1, E-500*usec), OldThreadID: 0, NewThreadID: 99, NewThreadPriority: 15},
		&etwkernel.DPC{Common: c(0, E+80*usec), Kind: etwkernel.NormalDPC, InitialTime: E + 20*usec, Routine: ndisBase + 0x1234},
		&etwkernel.ReadyThread{Common: c(0, E+100*usec), TThreadID: me, Flag: etwkernel.ReadiedFromDPC},
		&etwkernel.CSwitch{Common: c(1, E+500*usec), OldThreadID: 99, NewThreadID: me, NewThreadPriority: 15, OldThreadPriority: 15},
	}
}

func causeNS(a attribution.Attribution, k attribution.Kind, name string) int64 {
	var n int64
	for _, c := range a.Causes {
		if c.Kind == k && (name == "" || c.Name == name) {
			n += c.NS
		}
	}
	return n
}

func TestETWExplainWait(t *testing.T) {
	deadline := 10 * ms
	late := waitRec{Deadline: deadline, Start: deadline - ms, End: deadline + 1500*usec}
	evs := append([]etwkernel.Event{ndisImage()}, lateSleep(deadline)...)
	tr := newETWTrace(evs, time.Millisecond)
	a := tr.explainWait(late, me, "sleep")
	if a.NotAttributed || a.ArmedLate || a.LatenessNS != 1500*usec {
		t.Fatalf("attribution %+v", a)
	}
	for _, want := range []struct {
		kind attribution.Kind
		name string
		ns   int64
	}{
		{KindTick, "period 1ms", ms},
		{attribution.Kind(etwkernel.DPCTime), "ndis.sys", 60 * usec},
		{attribution.Kind(etwkernel.OtherThreads), "tid 99 (priority 15)", 400 * usec},
		{attribution.KindUnexplained, "", 40 * usec},
	} {
		if got := causeNS(a, want.kind, want.name); got != want.ns {
			t.Errorf("%s %q = %d ns, want %d (causes %+v)", want.kind, want.name, got, want.ns, a.Causes)
		}
	}
	var sum int64
	for i, c := range a.Causes {
		sum += c.NS
		if c.NS < 0 || (i > 0 && c.NS > a.Causes[i-1].NS) {
			t.Errorf("causes not largest first, or negative: %+v", a.Causes)
		}
	}
	if sum != a.LatenessNS {
		t.Errorf("causes sum to %d, lateness %d", sum, a.LatenessNS)
	}
	if a.TimerCPU != 0 || a.RunCPU != 1 || !a.Migrated {
		t.Errorf("cpus: timer %d run %d migrated %v", a.TimerCPU, a.RunCPU, a.Migrated)
	}

	// The same wait on a high-resolution timer: no tick allowed, the
	// excess starts at the deadline.
	hr := tr.explainWait(late, me, "waitable-hr")
	if causeNS(hr, KindTick, "") != 0 || causeNS(hr, attribution.Kind(etwkernel.DPCTime), "ndis.sys") != 60*usec {
		t.Errorf("high-resolution: %+v", hr.Causes)
	}

	// Within the tick: late by the tick only.
	onTick := tr.explainWait(waitRec{Deadline: deadline, Start: deadline - ms, End: deadline + 700*usec}, me, "sleep")
	if causeNS(onTick, KindTick, "") != 700*usec || causeNS(onTick, attribution.KindUnexplained, "") != 0 {
		t.Errorf("on its tick: %+v", onTick.Causes)
	}

	// Armed late: said once, not explained again.
	armed := tr.explainWait(waitRec{Deadline: deadline, Start: deadline + 10*usec, End: deadline + 2*ms}, me, "timesetevent")
	if !armed.ArmedLate || armed.Causes[0].Kind != attribution.KindArmedLate {
		t.Errorf("armed late: %+v", armed)
	}

	// Not late: nothing.
	if a := tr.explainWait(waitRec{Deadline: deadline, Start: deadline - ms, End: deadline}, me, "sleep"); len(a.Causes) != 0 {
		t.Errorf("not late: %+v", a)
	}

	// ETW lost events: no wait attributed across the loss.
	lost := newETWTrace(evs, time.Millisecond)
	lost.lostBuffers = 1
	if a := lost.explainWait(late, me, "sleep"); !a.NotAttributed || a.Causes[0].Kind != attribution.KindNotAttributed || a.Causes[0].NS != a.LatenessNS {
		t.Errorf("after a loss: %+v", a)
	}

	// Events past MaxETWEvents were not kept: waits after the first one
	// dropped are not attributed, those before are.
	cut := newETWTrace(evs, time.Millisecond)
	cut.droppedAt, cut.dropped = deadline+20*ms, 5
	if a := cut.explainWait(late, me, "sleep"); a.NotAttributed {
		t.Errorf("before the cut: %+v", a)
	}
	cut.droppedAt = deadline + ms
	if a := cut.explainWait(late, me, "sleep"); !a.NotAttributed {
		t.Errorf("after the cut: %+v", a)
	}

	// The period unknown: the tick model cannot run for a tick method.
	noPeriod := newETWTrace(evs, 0)
	if a := noPeriod.explainWait(late, me, "sleep"); !a.NotAttributed || !strings.Contains(strings.Join(a.Reasons, " "), "period") {
		t.Errorf("no period: %+v", a)
	}
	if a := noPeriod.explainWait(late, me, "waitable-hr"); a.NotAttributed {
		t.Errorf("no period, high-resolution: %+v", a)
	}

	// Nothing seen: the excess is unexplained, and the reasons say why.
	empty := newETWTrace(nil, time.Millisecond)
	a = empty.explainWait(late, me, "sleep")
	if causeNS(a, attribution.KindUnexplained, "") != 500*usec || causeNS(a, KindTick, "") != ms || len(a.Reasons) == 0 {
		t.Errorf("no events: %+v", a)
	}
}

// The window holds each processor's last CSwitch before the wait, and
// nothing from long before it or after it.
func TestETWWindow(t *testing.T) {
	c := func(cpu uint16, at int64) etwkernel.Common { return etwkernel.Common{CPU: cpu, At: at, Version: 2} }
	old := &etwkernel.CSwitch{Common: c(0, 1*ms), NewThreadID: 5}
	last := &etwkernel.CSwitch{Common: c(0, 2*ms), NewThreadID: 6}
	in := &etwkernel.ReadyThread{Common: c(0, 11*ms), TThreadID: me}
	after := &etwkernel.ReadyThread{Common: c(0, 30*ms), TThreadID: me}
	tr := newETWTrace([]etwkernel.Event{after, in, last, old}, time.Millisecond)
	got := tr.window(waitRec{Deadline: 11 * ms, Start: 10 * ms, End: 12 * ms})
	if len(got) != 2 || got[0] != in || got[1] != last {
		t.Errorf("window = %v", got)
	}
}

func TestETWResultNotes(t *testing.T) {
	evs := append([]etwkernel.Event{ndisImage()}, lateSleep(10*ms)...)
	evs = append(evs, &etwkernel.ImageLoad{Kind: etwkernel.ImageDCStart, ImageBase: 0xfffff80002000000, ImageSize: 0x1000, FileName: "evil\x1b[31m.sys"},
		&etwkernel.ISR{Common: etwkernel.Common{CPU: 0, At: 20 * ms, Version: 2}, InitialTime: 20*ms - 5*usec, Routine: 0xfffff80002000010})
	tr := newETWTrace(evs, 15625*time.Microsecond)
	tr.undecoded = 3
	notes := strings.Join(tr.resultNotes("sleep"), "\n")
	for _, want := range []string{"15.625ms", "ndis.sys: DPC highest 60µs total 60µs (1)", `evil\x1b[31m.sys: ISR highest 5µs`, "3 events", "not yet checked on real Windows", "thread id"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if strings.Contains(notes, "\x1b") {
		t.Errorf("an image name reaches the notes unescaped:\n%q", notes)
	}
	if notes := strings.Join(tr.resultNotes("waitable-hr"), "\n"); !strings.Contains(notes, "does not end on a clock tick") {
		t.Errorf("high-resolution notes:\n%s", notes)
	}
}

// The room on a fake Windows: a host whose Sleep(1) wakes late by a
// script, and a System whose session gives, for each wait, the events of
// lateSleep when it woke 1.5 ms late.
type etwHost struct {
	now   int64
	late  []int64
	waits []waitRec
}

func (h *etwHost) Query() (*timerinfo.Report, error) { return &timerinfo.Report{OS: "windows"}, nil }
func (h *etwHost) Methods() []seam.Method {
	return []seam.Method{{Name: "sleep", WholeMilliseconds: true, Schedule: seam.Relative}}
}
func (h *etwHost) Now() int64                      { return h.now }
func (h *etwHost) PrepareThread() (string, func()) { return "p", func() {} }
func (h *etwHost) Observe() seam.Observation       { return seam.Observation{} }
func (h *etwHost) NewWaiter(string, time.Duration) (seam.Waiter, error) {
	return h, nil
}
func (h *etwHost) Apply(s timerinfo.Setting) (timerinfo.Setting, func() error, error) {
	return s, func() error { return nil }, nil
}
func (h *etwHost) Wait(int64) error {
	start := h.now
	h.now += ms + h.late[len(h.waits)%len(h.late)]
	h.waits = append(h.waits, waitRec{Deadline: start + ms, Start: start, End: h.now})
	return nil
}
func (h *etwHost) Close() error           { return nil }
func (h *etwHost) CPUTime() time.Duration { return 0 }

type etwSystem struct {
	host     *etwHost
	elevated bool
	trace    *etwFakeTrace
}

func (s *etwSystem) CanTrace() (bool, string) { return s.elevated, NeedsElevation }
func (s *etwSystem) chooseLayer(asked Layer, canTrace bool, whyNot string) (Chosen, error) {
	return chooseETW(asked, canTrace, whyNot)
}
func (s *etwSystem) StartTrace(context.Context, func()) (Trace, error) {
	s.trace = &etwFakeTrace{host: s.host, info: TraceInfo{Instance: etwkernel.SessionName, RemovedLeftover: true, Missing: []string{}}}
	return s.trace, nil
}
func (s *etwSystem) Counters() (procstat.Snapshot, error) {
	return procstat.Snapshot{}, errors.New("windows has no /proc counters")
}
func (s *etwSystem) Thread() (Thread, error) { return etwThread{}, nil }

type etwThread struct{}

func (etwThread) TID() int { return me }
func (etwThread) SchedStat() (procstat.SchedStat, error) {
	return procstat.SchedStat{}, errors.New("windows keeps no run-queue time")
}

type etwFakeTrace struct {
	*etwTrace
	host          *etwHost
	info          TraceInfo
	stops, closes int
}

func (t *etwFakeTrace) Info() TraceInfo { return t.info }
func (t *etwFakeTrace) Stop() ([]attribution.Event, []attribution.Gap, error) {
	t.stops++
	evs := []etwkernel.Event{ndisImage()}
	for _, w := range t.host.waits {
		if w.End-w.Deadline == 1500*usec {
			evs = append(evs, lateSleep(w.Deadline)...)
		}
	}
	t.etwTrace = newETWTrace(evs, time.Millisecond)
	t.info.Events = len(evs)
	return nil, nil, nil
}
func (t *etwFakeTrace) Close() error {
	t.closes++
	t.info.Removed = true
	return nil
}

func TestRunOnETWFakes(t *testing.T) {
	h := &etwHost{late: []int64{100 * usec, 200 * usec, 300 * usec, 400 * usec, 1500 * usec}}
	sys := &etwSystem{host: h, elevated: true}
	res, _, err := Run(context.Background(), h, &timerinfo.Report{OS: "windows"}, sys, Options{Method: "sleep", Delay: time.Millisecond, Samples: 100, Over: time.Millisecond, Layer: LayerAuto, Worst: 10}, Reporting{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Layer != 1 || !strings.Contains(res.LayerWhy, etwkernel.SessionName) {
		t.Errorf("layer %d (%s)", res.Layer, res.LayerWhy)
	}
	if sys.trace.stops != 1 || sys.trace.closes < 1 || res.Trace == nil || !res.Trace.Removed || !res.Trace.RemovedLeftover {
		t.Errorf("session: %d stops, %d closes, info %+v", sys.trace.stops, sys.trace.closes, res.Trace)
	}
	if len(res.Late) != 20 {
		t.Fatalf("%d late waits, want 20", len(res.Late))
	}
	for _, l := range res.Late {
		var sum int64
		for _, c := range l.Causes {
			sum += c.Ns
		}
		if l.LatenessNs != 1500*usec || sum != l.LatenessNs || l.NotAttributed || l.TimerCPU != 0 || l.RunCPU != 1 {
			t.Errorf("late wait %+v: causes sum to %d", l, sum)
		}
	}
	g := res.Aggregate
	if g.Late != 20 || g.LatenessNs != 20*1500*usec {
		t.Errorf("aggregate: %d late, %d ns", g.Late, g.LatenessNs)
	}
	want := map[string]int64{string(KindTick): 20 * ms, string(etwkernel.OtherThreads): 20 * 400 * usec, string(etwkernel.DPCTime): 20 * 60 * usec, string(attribution.KindUnexplained): 20 * 40 * usec}
	for _, s := range g.Causes {
		if want[s.Cause] != s.Ns {
			t.Errorf("aggregate %s = %d ns, want %d", s.Cause, s.Ns, want[s.Cause])
		}
		delete(want, s.Cause)
	}
	if len(want) > 0 || g.Causes[0].Cause != string(KindTick) {
		t.Errorf("aggregate causes %+v, missing %v", g.Causes, want)
	}
	names := map[string]int64{}
	for _, n := range g.Names {
		names[n.Name] = n.Ns
	}
	if names["ndis.sys"] != 20*60*usec || names["tid 99 (priority 15)"] != 20*400*usec {
		t.Errorf("names %+v", g.Names)
	}
	if notes := strings.Join(res.Notes, "\n"); !strings.Contains(notes, "not yet checked on real Windows") || !strings.Contains(notes, "ndis.sys") {
		t.Errorf("notes:\n%s", notes)
	}

	// Not elevated, or layer 0 asked for: refused before a wait.
	for _, c := range []struct {
		layer    Layer
		elevated bool
		says     string
	}{{LayerAuto, false, "elevated"}, {Layer1, false, "elevated"}, {Layer0, true, "layer 0"}} {
		h := &etwHost{late: []int64{0}}
		sys := &etwSystem{host: h, elevated: c.elevated}
		_, _, err := Run(context.Background(), h, &timerinfo.Report{OS: "windows"}, sys, Options{Method: "sleep", Delay: time.Millisecond, Samples: 10, Layer: c.layer, Worst: 10}, Reporting{})
		var le *LayerError
		if !errors.As(err, &le) || !strings.Contains(err.Error(), c.says) || len(h.waits) != 0 || sys.trace != nil {
			t.Errorf("layer %d, elevated %v: %v after %d waits", c.layer, c.elevated, err, len(h.waits))
		}
	}
}
