package hold_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/hold"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// A hold that stays held: the holder checks its setting every
// RecheckEvery and after a resume from sleep, and applies it again when
// the OS dropped it. On a fake ticker and the model's virtual clock, so a
// minute of holding takes milliseconds.

// stuck is how long a test waits for the hold to take a tick or make a
// check before it fails: a hold that missed a tick or a resume must fail
// the test at once, not hang the suite until go test's timeout.
const stuck = 30 * time.Second

// recv receives from ch, failing the test if nothing comes within stuck.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(stuck):
		t.Fatalf("no %s within %v", what, stuck)
		panic("unreachable")
	}
}

// send sends v on ch, failing the test if the hold does not take it
// within stuck.
func send[T any](t *testing.T, ch chan<- T, v T, what string) {
	t.Helper()
	select {
	case ch <- v:
	case <-time.After(stuck):
		t.Fatalf("the hold took no %s within %v", what, stuck)
	}
}

// checkRecord is one call of HoldOptions.Checked.
type checkRecord struct {
	current   uint32
	held      uint32
	reapplied bool
}

// startHold holds 1 ms on the model in a goroutine with a fake ticker; it
// returns the tick channel, the checks as they happen, the warnings, and
// a stop that ends the hold and returns its report.
func startHold(t *testing.T, model *sim.Host, sys *sim.System) (ticks chan time.Time, checks chan checkRecord, warnings func() []string, holdingAt int64, stop func() *hold.HoldReport) {
	t.Helper()
	return startHoldOn(t, model, model, sys, 10000, 9998)
}

// startHoldOn is startHold on host (the model or a wrapper of it),
// requesting req, whose first check must see wantFirst.
func startHoldOn(t *testing.T, host seam.Host, model *sim.Host, sys *sim.System, req, wantFirst uint32) (ticks chan time.Time, checks chan checkRecord, warnings func() []string, holdingAt int64, stop func() *hold.HoldReport) {
	t.Helper()
	ticks = make(chan time.Time)
	checks = make(chan checkRecord, 1)
	var mu sync.Mutex
	var warned []string
	warnings = func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), warned...) }
	q, err := host.Query()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	holding := make(chan int64, 1)
	done := make(chan *hold.HoldReport)
	go func() {
		rep, err := hold.Hold(ctx, host, sys, q, timerinfo.Setting{Resolution100ns: req}, hold.HoldOptions{
			NoEsc:        true,
			RecheckEvery: 5 * time.Second,
			NewTicker: func(d time.Duration) (<-chan time.Time, func()) {
				if d != 5*time.Second {
					t.Errorf("ticker of %v, want the 5 s asked", d)
				}
				return ticks, func() {}
			},
			Warn:    func(msg string) { mu.Lock(); warned = append(warned, msg); mu.Unlock() },
			Holding: func(*hold.HoldReport) { holding <- model.Now() },
			Checked: func(q *timerinfo.Report, held timerinfo.Setting, reapplied bool) {
				checks <- checkRecord{q.Windows.Current100ns, held.Resolution100ns, reapplied}
			},
		})
		if err != nil {
			t.Error(err)
		}
		done <- rep
	}()
	holdingAt = recv(t, holding, "Holding")
	if first := recv(t, checks, "first check"); first.reapplied || first.current != wantFirst {
		t.Fatalf("first check %+v, want %d in force", first, wantFirst)
	}
	return ticks, checks, warnings, holdingAt, func() *hold.HoldReport { cancel(); return recv(t, done, "end of the hold") }
}

func TestHolderReappliesADroppedRequestWithinItsInterval(t *testing.T) {
	model, err := sim.NewHost("dropped-request", 1)
	if err != nil {
		t.Fatal(err)
	}
	sys := &sim.System{}
	ticks, checks, warnings, holdingAt, stop := startHold(t, model, sys)
	const every = 5 * time.Second
	dropAt := int64(-1)
	for k := 1; k <= 30; k++ {
		model.Advance(every)
		send(t, ticks, time.Unix(0, model.Now()), "tick")
		c := recv(t, checks, "check")
		// The request was made at most a few virtual seconds before
		// holdingAt (the quick check's waits), and the model drops it 60 s
		// after: the check at holdingAt+60 s is the first after the drop.
		elapsed := time.Duration(model.Now() - holdingAt)
		switch {
		case elapsed < 60*time.Second && c.reapplied:
			t.Fatalf("re-applied at +%v, before the OS dropped the request", elapsed)
		case elapsed == 60*time.Second && !c.reapplied:
			t.Fatalf("the check at +%v, the first after the drop, did not re-apply (period %d)", elapsed, c.current)
		case c.reapplied && dropAt < 0:
			dropAt = model.Now()
		}
		if c.current != 9998 {
			t.Fatalf("check at +%v: period %d after the check, want 9998 in force", elapsed, c.current)
		}
	}
	rep := stop()
	// 150 s of holding: dropped at +60 s and +120 s after each apply.
	if rep.Reapplies != 2 || rep.EndedBy != "signal" {
		t.Errorf("re-applies %d, ended by %q; want 2, signal", rep.Reapplies, rep.EndedBy)
	}
	w := warnings()
	if len(w) != 2 || !strings.Contains(w[0], "was lost (current period 15.6250 ms now): applied it again (re-apply 1; current period 0.9998 ms now)") {
		t.Errorf("warnings %q", w)
	}
	if model.Observe().Current100ns != 156250 {
		t.Errorf("after the hold the period is %d, want the default", model.Observe().Current100ns)
	}
}

func TestHolderChecksAfterResume(t *testing.T) {
	model, _ := sim.NewHost("dropped-request", 1)
	// Windows: a resume notification checks at once, between ticks.
	sys := &sim.System{Resumes: true}
	_, checks, warnings, _, stop := startHold(t, model, sys)
	model.Advance(61 * time.Second) // asleep past the drop
	sys.Resume()
	if c := recv(t, checks, "check"); !c.reapplied {
		t.Errorf("after a resume: %+v, want a re-apply", c)
	}
	stop()
	if w := warnings(); len(w) != 1 || !strings.Contains(w[0], "was lost after a resume from sleep") {
		t.Errorf("warnings %q", w)
	}

	// Linux: no notification; the time suspended grew by the next tick.
	model, _ = sim.NewHost("dropped-request", 1)
	sys = &sim.System{SleptKnown: true, Slept: time.Minute}
	ticks, checks, warnings, _, stop := startHold(t, model, sys)
	sys.Sleep(90 * time.Second)
	model.Advance(61 * time.Second)
	send(t, ticks, time.Time{}, "tick")
	if c := recv(t, checks, "check"); !c.reapplied {
		t.Errorf("after a suspend: %+v, want a re-apply", c)
	}
	stop()
	if w := warnings(); len(w) != 1 || !strings.Contains(w[0], "was lost after a resume from sleep (1m30s asleep)") {
		t.Errorf("warnings %q", w)
	}
}

// ignoringHost is the model with an OS that, while ignore is set, leaves
// the timer at the coarsest period whatever this process requests
// (Windows 11 ignoring a hidden holder whose throttling opt-out failed)
// and says so in its grant.
type ignoringHost struct {
	*sim.Host
	ignore atomic.Bool
}

func (h *ignoringHost) Query() (*timerinfo.Report, error) {
	q, err := h.Host.Query()
	if err == nil && h.ignore.Load() {
		q.Windows.Current100ns = q.Windows.Coarsest100ns
	}
	return q, err
}

func (h *ignoringHost) Apply(s timerinfo.Setting) (timerinfo.Setting, func() error, error) {
	granted, release, err := h.Host.Apply(s)
	if err == nil && h.ignore.Load() {
		granted.Resolution100ns = 156250
	}
	return granted, release, err
}

// TestHolderDoesNotReapplyForever: when the OS keeps ignoring the request,
// a re-apply that does not restore the setting is logged once, and the
// holder does not release, request and log again at every check until
// the timer state changes.
func TestHolderDoesNotReapplyForever(t *testing.T) {
	model, _ := sim.NewHost("knee-26100", 1)
	host := &ignoringHost{Host: model}
	ticks, checks, warnings, _, stop := startHoldOn(t, host, model, &sim.System{}, 10000, 9998)
	tick := func() checkRecord {
		model.Advance(5 * time.Second)
		send(t, ticks, time.Time{}, "tick")
		return recv(t, checks, "check")
	}
	host.ignore.Store(true) // from now on the OS ignores the request
	if c := tick(); !c.reapplied {
		t.Fatalf("first check after the drop: %+v, want a re-apply", c)
	}
	for i := 0; i < 20; i++ {
		if c := tick(); c.reapplied {
			t.Fatalf("check %d after a re-apply that did not restore the setting re-applied again", i+2)
		}
	}
	w := warnings()
	if len(w) != 1 || !strings.Contains(w[0], "but current period 15.6250 ms is in force: the OS does not honour the request now; not applied again until the timer state changes") {
		t.Fatalf("warnings %q, want one saying the re-apply did not restore it", w)
	}
	host.ignore.Store(false) // honoured again: in force, nothing to do
	if c := tick(); c.reapplied || c.current != 9998 {
		t.Errorf("after the OS honours it again: %+v", c)
	}
	host.ignore.Store(true) // lost again: a new state, a new try
	if c := tick(); !c.reapplied {
		t.Errorf("lost a second time: %+v, want a re-apply", c)
	}
	if rep := stop(); rep.Reapplies != 2 || len(warnings()) != 2 {
		t.Errorf("re-applies %d, warnings %q; want 2 of each", rep.Reapplies, warnings())
	}
}

// TestHolderKeepsWhatWasGranted: a grant coarser than the request at the
// start (the OS ignored it from the first) is what the holder keeps; the
// checks do not re-apply every 5 s to reach a request never granted.
func TestHolderKeepsWhatWasGranted(t *testing.T) {
	model, _ := sim.NewHost("knee-26100", 1)
	host := &ignoringHost{Host: model}
	host.ignore.Store(true)
	ticks, checks, warnings, _, stop := startHoldOn(t, host, model, &sim.System{}, 10000, 156250)
	for i := 0; i < 10; i++ {
		model.Advance(5 * time.Second)
		send(t, ticks, time.Time{}, "tick")
		if c := recv(t, checks, "check"); c.reapplied {
			t.Fatalf("check %d re-applied a request the OS never granted", i+1)
		}
	}
	if rep := stop(); rep.Reapplies != 0 || len(warnings()) != 0 {
		t.Errorf("re-applies %d, warnings %q; want none", rep.Reapplies, warnings())
	}
}

// TestHolderReportsItsRequest: with another process holding 0.5 ms, a
// holder of 1 ms is granted 0.5 ms (the machine's period); what it holds,
// which apply --listen exports, is its 1 ms.
func TestHolderReportsItsRequest(t *testing.T) {
	model, _ := sim.NewHost("contaminated", 1)
	ticks, checks, _, _, stop := startHoldOn(t, model, model, &sim.System{}, 10000, 5000)
	model.Advance(5 * time.Second)
	send(t, ticks, time.Time{}, "tick")
	if c := recv(t, checks, "check"); c.held != 10000 || c.reapplied {
		t.Errorf("check %+v: want 10000 held, as requested, and no re-apply", c)
	}
	if rep := stop(); rep.Granted.Resolution100ns != 5000 {
		t.Errorf("granted %d, want the other process's 5000", rep.Granted.Resolution100ns)
	}
}
