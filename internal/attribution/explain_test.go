package attribution

import (
	"slices"
	"strings"
	"testing"
)

const (
	tid   = 1000
	timer = 0xffff0001
)

// tl builds a synthetic trace.
type tl struct{ evs []Event }

func (b *tl) add(e Event) *tl {
	if e.TargetCPU == 0 && e.Kind != Waking && e.Kind != Wakeup && e.Kind != Migrate {
		e.TargetCPU = -1
	}
	b.evs = append(b.evs, e)
	return b
}

func (b *tl) sw(t int64, cpu, prev int, prevComm string, next int, nextComm string) *tl {
	return b.add(Event{Time: t, CPU: cpu, Kind: Switch, PrevPID: prev, PrevComm: prevComm, NextPID: next, NextComm: nextComm})
}

// timerIRQ is the local timer interrupt at from that expires our timer
// and wakes us onto target, ending at to.
func (b *tl) timerIRQ(cpu int, from, to int64, target int) *tl {
	b.add(Event{Time: from, CPU: cpu, Kind: VectorEntry, Name: "LOC", IRQ: 236})
	b.add(Event{Time: from + 5, CPU: cpu, Kind: HrtimerExpireEntry, Hrtimer: timer})
	b.add(Event{Time: from + 10, CPU: cpu, Kind: Waking, TargetPID: tid, TargetCPU: target, Name: "waiter"})
	b.add(Event{Time: from + 15, CPU: cpu, Kind: Wakeup, TargetPID: tid, TargetCPU: target, Name: "waiter"})
	b.add(Event{Time: from + 20, CPU: cpu, Kind: HrtimerExpireExit, Hrtimer: timer})
	return b.add(Event{Time: to, CPU: cpu, Kind: VectorExit, Name: "LOC", IRQ: 236})
}

// wait is armed at 100 on cpu0 for soft, with slack to hard, woke at woke;
// the trace starts with our thread switching out to idle at 110.
func wait(soft, hard, woke int64) (Wait, *tl) {
	w := Wait{TID: tid, CPU: 0, Hrtimer: timer, Armed: 100, SoftExpires: soft, Expires: hard, Woke: woke}
	b := &tl{}
	b.add(Event{Time: 100, CPU: 0, Kind: HrtimerStart, PID: tid, Hrtimer: timer, SoftExpires: soft, Expires: hard})
	b.sw(110, 0, tid, "waiter", 0, "swapper/0")
	return w, b
}

func causes(a Attribution) map[Cause]bool {
	m := map[Cause]bool{}
	for _, c := range a.Causes {
		m[c] = true
	}
	return m
}

func check(t *testing.T, a Attribution, want ...Cause) {
	t.Helper()
	var sum int64
	for _, c := range a.Causes {
		if c.NS <= 0 {
			t.Errorf("cause %+v not positive", c)
		}
		sum += c.NS
	}
	if a.LatenessNS > 0 && sum != a.LatenessNS {
		t.Errorf("causes add up to %d, lateness %d", sum, a.LatenessNS)
	}
	got := causes(a)
	for _, c := range want {
		if !got[c] {
			t.Errorf("no %+v in %+v", c, a.Causes)
		}
	}
	if len(a.Causes) != len(want) {
		t.Errorf("causes %+v, want %+v (reasons %q)", a.Causes, want, a.Reasons)
	}
}

func TestSlackThenTimerIRQThenIdleExit(t *testing.T) {
	w, b := wait(1000, 1500, 1650)
	b.timerIRQ(0, 1500, 1530, 0)
	b.sw(1600, 0, 0, "swapper/0", tid, "waiter")
	a := Explain(w, NewTimeline(b.evs), nil)
	check(t, a,
		Cause{KindSlack, "", "", 500},
		Cause{KindTimerIRQ, "LOC", "", 30},
		Cause{KindIdleExit, "", "cpu0", 70},
		Cause{KindReturn, "", "", 50})
	if a.TimerCPU != 0 || a.RunCPU != 0 || a.Migrated || a.Blocking != "" {
		t.Errorf("%+v", a)
	}
}

// A timer expired by an interrupt inside its slack range is not late for
// the part after that interrupt: only the slack it used is slack.
func TestTimerFiredWithinSlack(t *testing.T) {
	w, b := wait(1000, 2000, 1300)
	b.timerIRQ(0, 1200, 1230, 0)
	b.sw(1250, 0, 0, "swapper/0", tid, "waiter")
	check(t, Explain(w, NewTimeline(b.evs), nil),
		Cause{KindSlack, "", "", 200},
		Cause{KindTimerIRQ, "LOC", "", 30},
		Cause{KindIdleExit, "", "cpu0", 20},
		Cause{KindReturn, "", "", 50})
}

// A wait begun with its CPU idle in a deep state is late by the time that
// CPU took to take the timer's interrupt: an IRQ delay, said with the
// state. What the CPU was running and its idle state are found however
// many events of other CPUs came after them (more than the 65,536 a
// scan back once covered).
func TestIRQDelayFromIdleState(t *testing.T) {
	for _, tc := range []struct {
		name string
		// begin is the trace up to the timer's expiry: the wait, our
		// thread switched out and CPU 0 in idle state 2.
		begin func() (Wait, *tl)
	}{
		{"just before", func() (Wait, *tl) {
			w, b := wait(1000, 1000, 1400)
			b.add(Event{Time: 120, CPU: 0, Kind: CPUIdle, State: 2})
			return w, b
		}},
		{"100,000 events back", func() (Wait, *tl) {
			w := Wait{TID: tid, CPU: 0, Hrtimer: timer, Armed: 100, SoftExpires: 1000, Expires: 1000, Woke: 1400}
			b := &tl{}
			b.sw(40, 0, tid, "waiter", 0, "swapper/0")
			b.add(Event{Time: 50, CPU: 0, Kind: CPUIdle, State: 2})
			for range 100_000 {
				b.add(Event{Time: 60, CPU: 1, Kind: IRQEntry, Name: "eth0", IRQ: 30})
			}
			return w, b
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, b := tc.begin()
			b.timerIRQ(0, 1300, 1330, 0)
			b.add(Event{Time: 1340, CPU: 0, Kind: CPUIdle, State: IdleExit})
			b.sw(1350, 0, 0, "swapper/0", tid, "waiter")
			a := Explain(w, NewTimeline(b.evs), nil)
			check(t, a,
				Cause{KindIRQDelay, "", "cpu0 in idle state 2", 300},
				Cause{KindTimerIRQ, "LOC", "", 30},
				Cause{KindIdleExit, "", "cpu0", 20},
				Cause{KindReturn, "", "", 50})
			if !a.IdleKnown || a.IdleState != 2 {
				t.Errorf("idle state %d known %v", a.IdleState, a.IdleKnown)
			}
		})
	}
}

// An IRQ delay while a thread ran is unexplained: the interrupt was held
// off on a busy CPU (interrupts off, or delivered late by the host), and
// no event says which; the thread is not its cause.
func TestIRQDelayWhileBusy(t *testing.T) {
	w, b := wait(1000, 1000, 1400)
	b.sw(200, 0, 0, "swapper/0", 55, "hog")
	b.timerIRQ(0, 1300, 1330, 0)
	b.sw(1350, 0, 55, "hog", tid, "waiter")
	a := Explain(w, NewTimeline(b.evs), nil)
	check(t, a,
		Cause{KindUnexplained, "", "", 300},
		Cause{KindTimerIRQ, "LOC", "", 30},
		Cause{KindBlocking, "hog:55", "", 20},
		Cause{KindReturn, "", "", 50})
	if a.IdleKnown {
		t.Error("a busy CPU said idle")
	}
}

// Another IRQ handler that ran while the timer's was due delayed it: that
// part of the IRQ delay is the handler's.
func TestPreviousIRQInterference(t *testing.T) {
	w, b := wait(1000, 1000, 1400)
	b.add(Event{Time: 1050, CPU: 0, Kind: IRQEntry, IRQ: 38, Name: "virtio2-input.0"})
	b.add(Event{Time: 1250, CPU: 0, Kind: IRQExit, IRQ: 38})
	b.timerIRQ(0, 1300, 1330, 0)
	b.sw(1350, 0, 0, "swapper/0", tid, "waiter")
	check(t, Explain(w, NewTimeline(b.evs), nil),
		Cause{KindIRQDelay, "", "cpu0 idle", 100},
		Cause{KindIRQ, "38:virtio2-input.0", "", 200},
		Cause{KindTimerIRQ, "LOC", "", 30},
		Cause{KindIdleExit, "", "cpu0", 20},
		Cause{KindReturn, "", "", 50})
}

// Softirqs, IRQs and NMIs after the timer's IRQ are counted net of what
// nests inside them.
func TestInterferenceNested(t *testing.T) {
	w, b := wait(1000, 1000, 2000)
	b.timerIRQ(0, 1000, 1030, 0)
	b.add(Event{Time: 1030, CPU: 0, Kind: SoftirqEntry, Vec: 3})
	b.add(Event{Time: 1610, CPU: 0, Kind: NMI, DurationNS: 10}) // 1600-1610, inside NET_RX
	b.add(Event{Time: 1630, CPU: 0, Kind: SoftirqExit, Vec: 3})
	b.add(Event{Time: 1700, CPU: 0, Kind: IRQEntry, IRQ: 41, Name: "virtio3-rx"})
	b.add(Event{Time: 1720, CPU: 0, Kind: IRQExit, IRQ: 41})
	b.sw(1900, 0, 0, "swapper/0", tid, "waiter")
	check(t, Explain(w, NewTimeline(b.evs), nil),
		Cause{KindTimerIRQ, "LOC", "", 30},
		Cause{KindSoftirq, "NET_RX", "", 590},
		Cause{KindNMI, "NMI", "", 10},
		Cause{KindIRQ, "41:virtio3-rx", "", 20},
		Cause{KindIdleExit, "", "cpu0", 250},
		Cause{KindReturn, "", "", 100})
}

// The thread the timer interrupted blocks us until it switches out; the
// threads after it are interference.
func TestBlockingThreadThenOthers(t *testing.T) {
	w := Wait{TID: tid, CPU: 0, Hrtimer: timer, Armed: 100, SoftExpires: 1000, Expires: 1000, Woke: 2520}
	b := &tl{}
	b.sw(50, 0, 0, "swapper/0", 77, "busy") // before the wait: found looking back
	b.add(Event{Time: 100, CPU: 0, Kind: HrtimerStart, PID: tid, Hrtimer: timer})
	b.timerIRQ(0, 1000, 1030, 0)
	b.sw(2000, 0, 77, "busy", 88, "other")
	b.sw(2500, 0, 88, "other", tid, "waiter")
	a := Explain(w, NewTimeline(b.evs), nil)
	check(t, a,
		Cause{KindTimerIRQ, "LOC", "", 30},
		Cause{KindBlocking, "busy:77", "", 970},
		Cause{KindThread, "other:88", "", 500},
		Cause{KindReturn, "", "", 20})
	if a.Blocking != "busy:77" {
		t.Errorf("blocking %q", a.Blocking)
	}
}

// A blocking thread that runs again after another is interference the
// second time.
func TestBlockingThreadOnlyItsFirstStretch(t *testing.T) {
	w, b := wait(1000, 1000, 1700)
	b.sw(500, 0, 0, "swapper/0", 77, "busy")
	b.timerIRQ(0, 1000, 1030, 0)
	b.sw(1100, 0, 77, "busy", 88, "other")
	b.sw(1200, 0, 88, "other", 77, "busy")
	b.sw(1600, 0, 77, "busy", tid, "waiter")
	check(t, Explain(w, NewTimeline(b.evs), nil),
		Cause{KindTimerIRQ, "LOC", "", 30},
		Cause{KindBlocking, "busy:77", "", 70},
		Cause{KindThread, "other:88", "", 100},
		Cause{KindThread, "busy:77", "", 400},
		Cause{KindReturn, "", "", 100})
}

// Woken onto another CPU, which was idle until the reschedule IPI.
func TestRemoteWakeup(t *testing.T) {
	w, b := wait(1000, 1000, 1300)
	b.sw(105, 1, 9, "kworker", 0, "swapper/1")
	b.timerIRQ(0, 1000, 1030, 1)
	b.add(Event{Time: 1200, CPU: 1, Kind: VectorEntry, Name: "RES", IRQ: 253})
	b.add(Event{Time: 1210, CPU: 1, Kind: VectorExit, Name: "RES", IRQ: 253})
	b.sw(1250, 1, 0, "swapper/1", tid, "waiter")
	a := Explain(w, NewTimeline(b.evs), nil)
	// Until the wake-up (at 1010) the timer's IRQ on cpu0; then cpu1.
	check(t, a,
		Cause{KindTimerIRQ, "LOC", "", 10},
		Cause{KindRemote, "", "cpu1", 230},
		Cause{KindIRQ, "RES", "", 10},
		Cause{KindReturn, "", "", 50})
	if !a.Migrated || a.TimerCPU != 0 || a.RunCPU != 1 {
		t.Errorf("%+v", a)
	}
}

// Woken onto its own busy CPU, then moved by the load balancer to an
// idle one.
func TestMigration(t *testing.T) {
	w, b := wait(1000, 1000, 1700)
	b.sw(500, 0, 0, "swapper/0", 77, "busy")
	b.sw(105, 1, 9, "kworker", 0, "swapper/1")
	b.timerIRQ(0, 1000, 1030, 0)
	b.add(Event{Time: 1500, CPU: 1, Kind: Migrate, TargetPID: tid, OrigCPU: 0, TargetCPU: 1, Name: "waiter"})
	b.sw(1600, 1, 0, "swapper/1", tid, "waiter")
	a := Explain(w, NewTimeline(b.evs), nil)
	check(t, a,
		Cause{KindTimerIRQ, "LOC", "", 30},
		Cause{KindBlocking, "busy:77", "", 470},
		Cause{KindRemote, "", "cpu1", 100},
		Cause{KindReturn, "", "", 100})
	if !a.Migrated || a.RunCPU != 1 {
		t.Errorf("%+v", a)
	}
}

func TestArmedLateSaidOnce(t *testing.T) {
	w, b := wait(50, 50, 400)
	b.timerIRQ(0, 100, 130, 0)
	a := Explain(w, NewTimeline(b.evs), nil)
	check(t, a, Cause{KindArmedLate, "", "", 350})
	if !a.ArmedLate || a.InheritedNS != 50 {
		t.Errorf("%+v", a)
	}
}

func TestGapNotAttributed(t *testing.T) {
	w, b := wait(1000, 1000, 1650)
	b.timerIRQ(0, 1500, 1530, 0)
	b.sw(1600, 0, 0, "swapper/0", tid, "waiter")
	a := Explain(w, NewTimeline(b.evs), []Gap{{CPU: 0, From: 1400, To: 1450}})
	check(t, a, Cause{KindNotAttributed, "", "cpu0", 650})
	if !a.NotAttributed || len(a.Reasons) != 1 {
		t.Errorf("%+v", a)
	}
	// A gap on a CPU the wait did not use, or outside it, changes nothing.
	for _, g := range []Gap{{CPU: 1, From: 1400, To: 1450}, {CPU: 0, From: 1700, To: 1800}, {CPU: 0, From: 10, To: 90}} {
		if a := Explain(w, NewTimeline(b.evs), []Gap{g}); a.NotAttributed {
			t.Errorf("gap %+v: %+v", g, a)
		}
	}
	// Without the expiry, a gap on any CPU.
	w.Hrtimer = 0x1234
	if a := Explain(w, NewTimeline(b.evs), []Gap{{CPU: 1, From: 1400, To: 1450}}); !a.NotAttributed {
		t.Errorf("%+v", a)
	}
}

func TestMissingExpiryUnexplained(t *testing.T) {
	w, b := wait(1000, 1200, 1650)
	w.Hrtimer = 0x1234 // another timer's expiry only
	b.timerIRQ(0, 1500, 1530, 0)
	a := Explain(w, NewTimeline(b.evs), nil)
	check(t, a, Cause{KindSlack, "", "", 200}, Cause{KindUnexplained, "", "", 450})
	if len(a.Reasons) == 0 {
		t.Error("no reason")
	}
}

// A CPU whose trace never says which thread ran leaves that time
// unexplained rather than guessed.
func TestUnknownThreadUnexplained(t *testing.T) {
	w := Wait{TID: tid, CPU: 0, Hrtimer: timer, Armed: 100, SoftExpires: 1000, Expires: 1000, Woke: 1300}
	b := &tl{}
	b.timerIRQ(0, 1000, 1030, 0)
	a := Explain(w, NewTimeline(b.evs), nil)
	check(t, a, Cause{KindTimerIRQ, "LOC", "", 30}, Cause{KindUnexplained, "", "", 270})
	if len(a.Reasons) == 0 {
		t.Error("no reason")
	}
}

func TestNotLate(t *testing.T) {
	w, b := wait(1000, 1000, 1000)
	if a := Explain(w, NewTimeline(b.evs), nil); len(a.Causes) != 0 || a.LatenessNS != 0 {
		t.Errorf("%+v", a)
	}
}

// Events given out of order are sorted, not misread.
func TestUnsortedEvents(t *testing.T) {
	w, b := wait(1000, 1500, 1650)
	b.timerIRQ(0, 1500, 1530, 0)
	b.sw(1600, 0, 0, "swapper/0", tid, "waiter")
	want := Explain(w, NewTimeline(b.evs), nil)
	rev := slices.Clone(b.evs)
	slices.Reverse(rev)
	if got := Explain(w, NewTimeline(rev), nil); !slices.Equal(got.Causes, want.Causes) {
		t.Errorf("%+v != %+v", got.Causes, want.Causes)
	}
}

func TestSum(t *testing.T) {
	as := []Attribution{
		{LatenessNS: 1000, Causes: []Cause{{KindBlocking, "busy:7", "", 800}, {KindTimerIRQ, "LOC", "", 50}, {KindUnexplained, "", "", 150}}},
		{LatenessNS: 1000, Causes: []Cause{{KindThread, "busy:7", "", 600}, {KindSoftirq, "NET_RX", "", 400}}},
		{LatenessNS: 500, ArmedLate: true, Causes: []Cause{{KindArmedLate, "", "", 500}}},
		{LatenessNS: 2000, NotAttributed: true, Causes: []Cause{{KindNotAttributed, "", "cpu1", 2000}}},
		{LatenessNS: 0},
	}
	g := Sum(as)
	if g.Late != 3 || g.LatenessNS != 4000 || g.ArmedLate != 1 || g.ArmedLateNS != 500 || g.NotAttributed != 1 {
		t.Fatalf("%+v", g)
	}
	var kinds []Kind
	var total int64
	for _, s := range g.Causes {
		kinds = append(kinds, s.Kind)
		total += s.NS
	}
	want := []Kind{KindNotAttributed, KindBlocking, KindThread, KindSoftirq, KindUnexplained, KindTimerIRQ}
	if !slices.Equal(kinds, want) || total != g.LatenessNS {
		t.Errorf("kinds %v (total %d)", kinds, total)
	}
	if g.Causes[1].Share != 0.2 || g.Causes[1].Names[0] != (NameShare{"busy:7", 800, 0.2}) {
		t.Errorf("%+v", g.Causes[1])
	}
	if g.ByName("busy:7") != 1400 {
		t.Errorf("busy:7 %d", g.ByName("busy:7"))
	}
}

// A context is where a cause happened, not who did it: an IRQ delay on
// a CPU running busy:7 is not busy:7's, and each context counts the
// waits it was in once.
func TestSumKeepsContextsApart(t *testing.T) {
	as := []Attribution{
		{LatenessNS: 1000, Causes: []Cause{{KindIRQDelay, "", "cpu0 running busy:7", 600}, {KindBlocking, "busy:7", "", 400}}},
		{LatenessNS: 1000, Causes: []Cause{{KindIRQDelay, "", "cpu0 running busy:7", 300}, {KindIRQDelay, "", "cpu0 idle", 200}, {KindIdleExit, "", "cpu0", 500}}},
	}
	g := Sum(as)
	if got := g.ByName("busy:7"); got != 400 {
		t.Errorf("busy:7 has %d, want 400 (its blocking only)", got)
	}
	for _, s := range g.Causes {
		if (s.Kind == KindIRQDelay || s.Kind == KindIdleExit) && len(s.Names) != 0 {
			t.Errorf("%s has names %+v", s.Kind, s.Names)
		}
		if s.Kind == KindIRQDelay {
			want := []ContextShare{{"cpu0 running busy:7", 900, 0.45, 2}, {"cpu0 idle", 200, 0.1, 1}}
			if !slices.Equal(s.Contexts, want) {
				t.Errorf("IRQ delay contexts %+v, want %+v", s.Contexts, want)
			}
		}
	}
}

// Our thread, switched in, sleeps again before its clock read: the time
// until it runs again is its own, not the thread that ran meanwhile.
func TestOwnThreadBlockedAgain(t *testing.T) {
	w, b := wait(1000, 1000, 1500)
	b.timerIRQ(0, 1000, 1030, 0)
	b.sw(1100, 0, 0, "swapper/0", tid, "waiter")
	b.add(Event{Time: 1150, CPU: 0, Kind: Switch, PrevPID: tid, PrevComm: "waiter", PrevState: 1, NextPID: 77, NextComm: "busy"})
	b.add(Event{Time: 1300, CPU: 1, Kind: Waking, TargetPID: tid, TargetCPU: 1})
	b.sw(1400, 1, 0, "swapper/1", tid, "waiter")
	// Preempted (R+), by contrast, it stays runnable: that is the other
	// thread's time.
	check(t, Explain(w, NewTimeline(b.evs), nil),
		Cause{KindTimerIRQ, "LOC", "", 30},
		Cause{KindIdleExit, "", "cpu0", 70},
		Cause{KindReturn, "", "", 150},
		Cause{KindSelfBlock, "", "", 250})
	w2, b2 := wait(1000, 1000, 1500)
	b2.timerIRQ(0, 1000, 1030, 0)
	b2.sw(1100, 0, 0, "swapper/0", tid, "waiter")
	b2.add(Event{Time: 1150, CPU: 0, Kind: Switch, PrevPID: tid, PrevComm: "waiter", PrevState: 0x100, NextPID: 77, NextComm: "busy"})
	b2.sw(1400, 0, 77, "busy", tid, "waiter")
	check(t, Explain(w2, NewTimeline(b2.evs), nil),
		Cause{KindTimerIRQ, "LOC", "", 30},
		Cause{KindIdleExit, "", "cpu0", 70},
		Cause{KindReturn, "", "", 150},
		Cause{KindBlocking, "busy:77", "", 250})
}

// What a CPU was in before a gap is not assumed after it: the idle state
// traced before the recording stopped is not the IRQ delay's context.
// A wait inside a stretch of every CPU's without recording is not
// attributed.
func TestNoStateFromBeforeAGap(t *testing.T) {
	w, b := wait(1000, 1000, 1400)
	b.add(Event{Time: 50, CPU: 0, Kind: CPUIdle, State: 2})
	b.timerIRQ(0, 1300, 1330, 0)
	b.sw(1350, 0, 0, "swapper/0", tid, "waiter")
	if a := Explain(w, NewTimeline(b.evs), nil); !a.IdleKnown || a.IdleState != 2 {
		t.Fatalf("without a gap the idle state is not read: %+v", a)
	}
	a := Explain(w, NewTimeline(b.evs), []Gap{{CPU: AllCPUs, From: 60, To: 90}})
	check(t, a,
		Cause{KindIRQDelay, "", "cpu0 idle", 300},
		Cause{KindTimerIRQ, "LOC", "", 30},
		Cause{KindIdleExit, "", "cpu0", 20},
		Cause{KindReturn, "", "", 50})
	a = Explain(w, NewTimeline(b.evs), []Gap{{CPU: AllCPUs, From: 1100, To: 1200}})
	check(t, a, Cause{KindNotAttributed, "", "", 400})
	if len(a.Reasons) != 1 || !strings.Contains(a.Reasons[0], "not recording") {
		t.Errorf("reasons %q", a.Reasons)
	}
}

// What the events do not show is unexplained, not credited to the thread,
// the interrupt or the state nearest to it.
func TestUnseenIsUnexplained(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func() (Wait, *tl)
		want  []Cause
	}{{
		// The timer's IRQ came late on a CPU busy with another thread:
		// nothing traced says what held it off.
		name: "late IRQ on a busy CPU",
		build: func() (Wait, *tl) {
			w, b := wait(1000, 1000, 1400)
			b.sw(200, 0, 0, "swapper/0", 55, "hog")
			b.timerIRQ(0, 1300, 1330, 0)
			b.sw(1350, 0, 55, "hog", tid, "waiter")
			return w, b
		},
		want: []Cause{{KindUnexplained, "", "", 300}, {KindTimerIRQ, "LOC", "", 30}, {KindBlocking, "hog:55", "", 20}, {KindReturn, "", "", 50}},
	}, {
		// A softirq ran when the timer was due: hard IRQs are on in
		// it, so it is not what held the timer's IRQ off.
		name: "late IRQ during a softirq",
		build: func() (Wait, *tl) {
			w, b := wait(1000, 1000, 1400)
			b.add(Event{Time: 900, CPU: 0, Kind: SoftirqEntry, Vec: 3})
			b.timerIRQ(0, 1300, 1330, 0)
			b.add(Event{Time: 1340, CPU: 0, Kind: SoftirqExit, Vec: 3})
			b.sw(1350, 0, 0, "swapper/0", tid, "waiter")
			return w, b
		},
		want: []Cause{{KindUnexplained, "", "", 300}, {KindTimerIRQ, "LOC", "", 30}, {KindSoftirq, "NET_RX", "", 10}, {KindIdleExit, "", "cpu0", 10}, {KindReturn, "", "", 50}},
	}, {
		// The expiry was traced but no interrupt entry around it: the
		// time up to it is not the idle CPU's IRQ delay.
		name: "expiry with no IRQ entry",
		build: func() (Wait, *tl) {
			w, b := wait(1000, 1000, 1400)
			b.add(Event{Time: 120, CPU: 0, Kind: CPUIdle, State: 2})
			b.add(Event{Time: 1300, CPU: 0, Kind: HrtimerExpireEntry, Hrtimer: timer})
			b.add(Event{Time: 1310, CPU: 0, Kind: Wakeup, TargetPID: tid, TargetCPU: 0, Name: "waiter"})
			b.add(Event{Time: 1320, CPU: 0, Kind: HrtimerExpireExit, Hrtimer: timer})
			b.sw(1350, 0, 0, "swapper/0", tid, "waiter")
			return w, b
		},
		want: []Cause{{KindUnexplained, "", "", 300}, {KindIdleExit, "", "cpu0", 50}, {KindReturn, "", "", 50}},
	}, {
		// No expiry of this timer at all in the window.
		name: "no expiry traced",
		build: func() (Wait, *tl) {
			w, b := wait(1000, 1000, 1400)
			b.sw(200, 0, 0, "swapper/0", 55, "hog")
			b.sw(1350, 0, 55, "hog", tid, "waiter")
			return w, b
		},
		want: []Cause{{KindUnexplained, "", "", 400}},
	}, {
		// Woken, never seen switched in: what ran after the wake-up is
		// not known to have held our thread; the IRQ that woke it is.
		name: "woken, never switched in",
		build: func() (Wait, *tl) {
			w, b := wait(1000, 1000, 1400)
			b.timerIRQ(0, 1000, 1030, 0)
			b.sw(1100, 0, 0, "swapper/0", 55, "hog")
			return w, b
		},
		want: []Cause{{KindUnexplained, "", "", 370}, {KindTimerIRQ, "LOC", "", 30}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			w, b := tc.build()
			a := Explain(w, NewTimeline(b.evs), nil)
			check(t, a, tc.want...)
			if a.Explained() != a.LatenessNS-tc.want[0].NS && tc.want[0].Kind == KindUnexplained {
				t.Errorf("explained %d of %d", a.Explained(), a.LatenessNS)
			}
			if len(a.Reasons) == 0 {
				t.Error("no reason")
			}
		})
	}
}
