package hold_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/hold"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/timerstate"
)

// eventsRun is a hold with --while on a fake event source: the scan
// ticker at EventScanEvery is safety, and every ticker armed is told on
// tickers, by its interval.
type eventsRun struct {
	*whileRun
	events  *sim.ProgramEvents
	safety  chan time.Time
	tickers chan time.Duration
}

func startOnEvents(t *testing.T, programs ...string) *eventsRun {
	t.Helper()
	model, _ := sim.NewHost("game-session", 1)
	sys := &sim.System{ProcessEvents: sim.NewProgramEvents()}
	e := &eventsRun{events: sys.ProcessEvents, safety: make(chan time.Time), tickers: make(chan time.Duration, 16)}
	e.whileRun = startWhileWith(t, model, model, sys, func(o *hold.HoldOptions) {
		inner := o.NewTicker
		o.NewTicker = func(d time.Duration) (<-chan time.Time, func()) {
			e.tickers <- d
			if d == timerstate.EventScanEvery {
				return e.safety, func() {}
			}
			return inner(d)
		}
	}, programs...)
	return e
}

// announce gathers c and waits for the hold to take it.
func (e *eventsRun) announce(c seam.ProcessChanges) {
	e.t.Helper()
	e.events.Announce(c)
	recv(e.t, e.events.Taken(), "take of the announcement")
}

// lastHint is the last hint the scanner was given.
func (e *eventsRun) lastHint() seam.ScanHint {
	e.t.Helper()
	h := e.sys.HintsSoFar()
	if len(h) == 0 {
		e.t.Fatal("no hint given")
	}
	return h[len(h)-1]
}

// TestWhileOnEventsScansWhenAnnounced: with process events, a start and
// an exit are seen without a scan tick, the process announced is read
// afresh, and the scan ticks only every EventScanEvery (a safety scan);
// the report says which source it used.
func TestWhileOnEventsScansWhenAnnounced(t *testing.T) {
	e := startOnEvents(t, "game.exe")
	if d := recv(t, e.tickers, "recheck ticker"); d != 5*time.Second {
		t.Fatalf("first ticker %v, want the recheck's", d)
	}
	if d := recv(t, e.tickers, "scan ticker"); d != timerstate.EventScanEvery {
		t.Fatalf("scan ticker %v on events, want %v", d, timerstate.EventScanEvery)
	}
	// The game starts after the first scan, which found nothing, so that
	// only the announcement can make the hold see it.
	if pids := recv(t, e.events.Tracks(), "the first scan's track"); len(pids) != 0 {
		t.Fatalf("the first scan tracked %v, want none", pids)
	}
	e.procs.set(game(4242, "game.exe"))
	e.announce(seam.ProcessChanges{Ran: []int{4242}})
	if c := e.next(); c.event.Event != hold.EventStarted || c.event.PID != 4242 || c.event.Setting != hold.SettingHeld {
		t.Fatalf("after the exec was announced: %+v", c.event)
	}
	if h := e.lastHint(); !slices.Equal(h.PIDs, []int{4242}) || !h.Only || h.All {
		t.Errorf("hint %+v, want 4242 only", h)
	}
	// Only the exits of the game's threads are wanted now; none before.
	if tr := e.events.Tracked(); len(tr) != 2 || len(tr[0]) != 0 || !slices.Equal(tr[1], []int{4242}) {
		t.Errorf("tracked %v, want [] then [4242]", tr)
	}
	// Another process's thread exiting is no reason to scan; the game's
	// last thread exiting is.
	e.procs.set()
	e.announce(seam.ProcessChanges{Exited: []int{77}})
	e.announce(seam.ProcessChanges{Exited: []int{4242}})
	if c := e.next(); c.event.Event != hold.EventExited || c.event.Setting != hold.SettingReleased {
		t.Fatalf("after the exit was announced: %+v", c.event)
	}
	if h := e.lastHint(); h.Only || h.All {
		t.Errorf("hint %+v after a watched process lost a thread, want a look for every process", h)
	}
	// The safety scan still runs.
	e.procs.set(game(5000, "game.exe"))
	send(t, e.safety, time.Time{}, "safety scan")
	if c := e.next(); c.event.PID != 5000 || c.event.Setting != hold.SettingHeld {
		t.Fatalf("at the safety scan: %+v", c.event)
	}
	rep := e.stop()
	if w := rep.While; w.Source != timerstate.SourceEvents || w.ScanEveryNs != int64(timerstate.EventScanEvery) || w.SourceError != "" {
		t.Errorf("report: source %q (%q), scan every %v", w.Source, w.SourceError, time.Duration(w.ScanEveryNs))
	}
	if !e.events.Closed() {
		t.Error("the event source was not closed")
	}
}

// TestWhileOnEventsLostRereadsAll: announcements lost make the next scan
// read every process afresh.
func TestWhileOnEventsLostRereadsAll(t *testing.T) {
	e := startOnEvents(t, "game.exe")
	e.procs.set(game(4242, "game.exe"))
	e.announce(seam.ProcessChanges{Ran: []int{1}, Lost: true})
	if c := e.next(); c.event.PID != 4242 {
		t.Fatalf("after a loss: %+v", c.event)
	}
	if h := e.lastHint(); !h.All || h.Only {
		t.Errorf("hint %+v after a loss, want every process read afresh", h)
	}
	e.stop()
}

// TestWhileOnEventsFallsBack: a source that fails is closed, the hold
// scans every ScanEvery from then on, says so once, and reports the scan
// as its source with the reason.
func TestWhileOnEventsFallsBack(t *testing.T) {
	e := startOnEvents(t, "game.exe")
	recv(t, e.tickers, "recheck ticker")
	recv(t, e.tickers, "scan ticker")
	e.announce(seam.ProcessChanges{Err: errors.New("read the process connector: EBADF (test)")})
	if d := recv(t, e.tickers, "the scan ticker again"); d != time.Second {
		t.Fatalf("after the source failed, scanning every %v", d)
	}
	if !e.events.Closed() {
		t.Error("the failed source was not closed")
	}
	e.procs.set(game(4242, "game.exe"))
	e.tick(time.Second)
	if c := e.next(); c.event.PID != 4242 || c.event.Setting != hold.SettingHeld {
		t.Fatalf("scanning after the fallback: %+v", c.event)
	}
	rep := e.stop()
	if w := rep.While; w.Source != timerstate.SourceScan || !strings.Contains(w.SourceError, "EBADF") || w.ScanEveryNs != int64(time.Second) {
		t.Errorf("report: source %q (%q), scan every %v", w.Source, w.SourceError, time.Duration(w.ScanEveryNs))
	}
	if ws := e.warnings(); len(ws) != 1 || !strings.Contains(ws[0], "process events stopped") || !strings.Contains(ws[0], "every 1s instead") {
		t.Errorf("warnings %q", ws)
	}
}

// TestWhileOnEventsRetriesAFailedTakeEverySecond: while a program runs
// whose take failed, the hold scans (and tries again) every ScanEvery,
// as without events; once held, every EventScanEvery again.
func TestWhileOnEventsRetriesAFailedTakeEverySecond(t *testing.T) {
	model, _ := sim.NewHost("game-session", 1)
	host := &failingHost{Host: model}
	host.fail.Store(true)
	sys := &sim.System{ProcessEvents: sim.NewProgramEvents()}
	e := &eventsRun{events: sys.ProcessEvents, safety: make(chan time.Time), tickers: make(chan time.Duration, 16)}
	e.whileRun = startWhileWith(t, host, model, sys, func(o *hold.HoldOptions) {
		inner := o.NewTicker
		o.NewTicker = func(d time.Duration) (<-chan time.Time, func()) {
			e.tickers <- d
			if d == timerstate.EventScanEvery {
				return e.safety, func() {}
			}
			return inner(d)
		}
	}, "game.exe")
	recv(t, e.tickers, "recheck ticker")
	recv(t, e.tickers, "scan ticker")
	e.procs.set(game(4242, "game.exe"))
	e.announce(seam.ProcessChanges{Ran: []int{4242}})
	if c := e.next(); c.event.Setting != hold.SettingFailed {
		t.Fatalf("the take: %+v", c.event)
	}
	if d := recv(t, e.tickers, "the retry ticker"); d != time.Second {
		t.Fatalf("a failed take is tried again every %v", d)
	}
	host.fail.Store(false)
	e.tick(time.Second)
	if c := e.next(); c.event.Event != hold.EventRetried || c.event.Setting != hold.SettingHeld {
		t.Fatalf("the retry: %+v", c.event)
	}
	if d := recv(t, e.tickers, "the safety ticker again"); d != timerstate.EventScanEvery {
		t.Fatalf("held, scanning every %v", d)
	}
	e.stop()
}

// TestWhileWithoutEventsSaysWhy: a source that cannot be had (not
// ErrUnsupported) leaves the scan every ScanEvery, and the report says
// why.
func TestWhileWithoutEventsSaysWhy(t *testing.T) {
	model, _ := sim.NewHost("game-session", 1)
	sys := &sim.System{ProcessEventsErr: errors.New("no answer from the process connector (test)")}
	r := startWhileOn(t, model, model, sys, "game.exe")
	r.procs.set(game(1, "game.exe"))
	r.tick(time.Second)
	r.next()
	rep := r.stop()
	if w := rep.While; w.Source != timerstate.SourceScan || w.SourceError == "" || w.ScanEveryNs != int64(time.Second) {
		t.Errorf("report: source %q (%q), scan every %v", w.Source, w.SourceError, time.Duration(w.ScanEveryNs))
	}
	if len(r.warnings()) != 0 {
		t.Errorf("warnings %q", r.warnings())
	}
}
