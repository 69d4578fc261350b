package watch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/timerstate"
	"github.com/tickscope/tickscope/internal/who"
)

// fakeClock is a clock the test moves: fire advances it and delivers one
// tick of the ticker of that period, which the loop must take before fire
// returns.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	tickers map[time.Duration]chan time.Time
	ready   chan struct{}
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), tickers: map[time.Duration]chan time.Time{}, ready: make(chan struct{})}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time)
	c.tickers[d] = ch
	if len(c.tickers) == 2 {
		close(c.ready)
	}
	return ch, func() {}
}

func (c *fakeClock) fire(d time.Duration) {
	<-c.ready
	c.mu.Lock()
	c.now = c.now.Add(d)
	ch, now := c.tickers[d], c.now
	c.mu.Unlock()
	ch <- now
}

func i32(v int32) *int32 { return &v }

// signalled is read that says on done when each call has returned.
func signalled(read func() (timerstate.State, error), done chan<- struct{}) func() (timerstate.State, error) {
	return func() (timerstate.State, error) {
		defer func() { done <- struct{}{} }()
		return read()
	}
}

// script returns a Read that gives states in turn (the last one again
// once they run out) and an error where a state is nil.
func script(states ...*timerstate.State) func() (timerstate.State, error) {
	i := 0
	return func() (timerstate.State, error) {
		s := states[min(i, len(states)-1)]
		i++
		if s == nil {
			return timerstate.State{}, errors.New("query failed")
		}
		return *s, nil
	}
}

type events struct {
	mu  sync.Mutex
	all []Event
}

func (e *events) emit(ev Event) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
	return nil
}

func (e *events) kinds() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, ev := range e.all {
		if ev.Event != EventBurst {
			out = append(out, ev.Event)
		}
	}
	return out
}

func TestRunCountsChangesTimeAndLateness(t *testing.T) {
	a := &timerstate.State{TickNs: 4e6, DMALatencyUs: i32(timerinfo.DMALatencyDefaultUs), TimerSlackNs: 50_000}
	b := &timerstate.State{TickNs: 4e6, DMALatencyUs: i32(0), TimerSlackNs: 50_000}
	clock := newFakeClock()
	readDone := make(chan struct{}, 16)
	var got events
	holderReads := 0
	o := Options{
		Holders: func() ([]who.Hold, error) {
			holderReads++
			if holderReads == 2 {
				return nil, errors.New("not elevated")
			}
			return []who.Hold{{PID: 7, Name: "game.exe", What: who.WhatDMALatency}}, nil
		},
		Every: time.Second, MeasureEvery: 10 * time.Second, Method: "clock-abs", Delay: time.Millisecond, Waits: 3,
		Read:    signalled(script(a, a, b, b, nil, a), readDone),
		Measure: func(context.Context) ([]int64, error) { return []int64{500, 80_000, 3_000_000}, nil },
		Clock:   clock, Emit: got.emit,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *Summary)
	go func() {
		sum, err := Run(ctx, o)
		if err != nil {
			t.Error(err)
		}
		done <- sum
	}()
	// Each tick waits for its read, which takes the time first: fired
	// sooner, the next tick would move the clock under the read before it.
	<-readDone    // read 1, at the start
	for range 5 { // reads 2..6: a, b, b, error, a
		clock.fire(time.Second)
		<-readDone
	}
	cancel()
	sum := <-done

	if want := []string{"start", "change", "error", "change", "summary"}; strings.Join(got.kinds(), " ") != strings.Join(want, " ") {
		t.Errorf("events %v, want %v", got.kinds(), want)
	}
	if sum.Changes != 2 || sum.Reads != 5 || sum.ReadErrors != 1 {
		t.Errorf("changes %d reads %d errors %d, want 2, 5, 1", sum.Changes, sum.Reads, sum.ReadErrors)
	}
	// a from 0 to 2 s, b from 2 s to 5 s (the failed read at 4 s changes
	// nothing), a again from 5 s to the end.
	wantTime := map[string]time.Duration{"cpu_dma_latency none held": 2 * time.Second, "cpu_dma_latency 0 µs": 3 * time.Second}
	if len(sum.TimeAt) != 2 || sum.DurationNs != int64(5*time.Second) {
		t.Fatalf("time at %+v over %v, want two periods over 5 s", sum.TimeAt, time.Duration(sum.DurationNs))
	}
	for _, p := range sum.TimeAt {
		if time.Duration(p.Ns) != wantTime[p.Period] {
			t.Errorf("time at %s = %v, want %v", p.Period, time.Duration(p.Ns), wantTime[p.Period])
		}
	}
	l := sum.Lateness
	if sum.Bursts < 1 || l.Waits != int64(3*sum.Bursts) || l.MinNs != 500 || l.MaxNs != 3_000_000 {
		t.Errorf("lateness %+v after %d bursts", l, sum.Bursts)
	}
	if l.P50AtMostNs != 100_000 || l.P99AtMostNs != 5_000_000 {
		t.Errorf("p50 at most %d, p99 at most %d; want 100000, 5000000", l.P50AtMostNs, l.P99AtMostNs)
	}
	var counted int64
	for _, b := range l.Buckets {
		counted += b.Count
	}
	if counted != l.Waits {
		t.Errorf("buckets hold %d waits, want %d", counted, l.Waits)
	}
	// Who holds the timer is read at the start and at each change of the
	// DMA latency, not at every read.
	if holderReads != 3 {
		t.Errorf("holders read %d times, want 3", holderReads)
	}
	var withHolders, withError int
	for _, e := range got.all {
		if e.Holders != nil && len(*e.Holders) == 1 && (*e.Holders)[0].Name == "game.exe" {
			withHolders++
		}
		if e.HoldersError == "not elevated" {
			withError++
		}
	}
	if withHolders != 2 || withError != 1 {
		t.Errorf("%d events with holders, %d with the error; want 2 and 1", withHolders, withError)
	}
	var change Event
	for _, e := range got.all {
		if e.Event == EventChange {
			change = e
			break
		}
	}
	if len(change.Changes) != 1 || change.Changes[0] != (Change{Field: "cpu_dma_latency", From: "none held", To: "0 µs"}) {
		t.Errorf("first change %+v", change.Changes)
	}
}

func TestChanges(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name       string
		prev, next timerstate.State
		want       []Change
	}{
		{"same", timerstate.State{Current100ns: 156250}, timerstate.State{Current100ns: 156250}, nil},
		{"period", timerstate.State{Current100ns: 156250}, timerstate.State{Current100ns: 10000},
			[]Change{{"current_period", "15.6250 ms", "1.0000 ms"}}},
		{"global key and holder", timerstate.State{GlobalKeyInForce: &no, Holder: &timerstate.Holder{}}, timerstate.State{GlobalKeyInForce: &yes, Holder: &timerstate.Holder{Running: true, PID: 7}},
			[]Change{{"global_key_in_force", "false", "true"}, {"startup_holder", "not running", "running (process 7)"}}},
		{"holder with --while", timerstate.State{Holder: &timerstate.Holder{Running: true, PID: 7, While: []string{"game.exe", "x.exe"}}},
			timerstate.State{Holder: &timerstate.Holder{Running: true, PID: 7, While: []string{"game.exe", "x.exe"}, HoldingFor: []timerstate.ProgramRunning{{Program: "game.exe", PID: 42}}}},
			[]Change{{"startup_holder", "running (process 7), for game.exe, x.exe: none runs", "running (process 7), for game.exe, x.exe: game.exe (pid 42) runs"}}},
		{"dma unreadable", timerstate.State{DMALatencyUs: i32(5)}, timerstate.State{}, []Change{{"cpu_dma_latency", "5 µs", "unreadable"}}},
		{"slack", timerstate.State{TimerSlackNs: 50_000}, timerstate.State{TimerSlackNs: 1}, []Change{{"timer_slack", "50µs", "1ns"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Changes(tt.prev, tt.next)
			if len(got) != len(tt.want) {
				t.Fatalf("Changes = %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("change %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestReadStateOnTheModel reads the state through the query path of the
// model of Windows timers, and sees a request made there.
func TestReadStateOnTheModel(t *testing.T) {
	model, err := sim.NewHost("narrow-band", 1)
	if err != nil {
		t.Fatal(err)
	}
	before, err := timerstate.ReadState(model)
	if err != nil {
		t.Fatal(err)
	}
	if before.Current100ns != before.Coarsest100ns || before.Finest100ns == 0 || before.GlobalKeyInForce == nil || !before.Simulated {
		t.Fatalf("state before %+v", before)
	}
	_, release, err := model.Apply(timerinfo.Setting{Resolution100ns: 10000})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	after, _ := timerstate.ReadState(model)
	changes := Changes(before, after)
	if len(changes) != 1 || changes[0].Field != "current_period" {
		t.Errorf("changes after a 1 ms request: %+v", changes)
	}
	if after.CurrentPeriod() >= before.CurrentPeriod() {
		t.Errorf("current period %v after a 1 ms request, %v before", after.CurrentPeriod(), before.CurrentPeriod())
	}
}

// TestForHostMeasuresLateness runs a real burst on the model: lateness is
// the wait's duration less the 1 ms asked.
func TestForHostMeasuresLateness(t *testing.T) {
	model, _ := sim.NewHost("narrow-band", 1)
	o, err := ForHost(model, nil, Flags{Every: time.Second, MeasureEvery: 10 * time.Second}, "test")
	if err != nil {
		t.Fatal(err)
	}
	lateness, err := o.Measure(context.Background())
	if err != nil || len(lateness) != BurstWaits {
		t.Fatalf("burst: %d waits, %v", len(lateness), err)
	}
	for _, ns := range lateness {
		if ns < 0 || ns > int64(16*time.Millisecond) {
			t.Fatalf("lateness %d ns of a 1 ms Sleep at the 15.625 ms default tick", ns)
		}
	}
	for _, bad := range []Flags{
		{Every: time.Millisecond, MeasureEvery: time.Second},
		{Every: time.Second, MeasureEvery: 0},
		{Every: time.Second, MeasureEvery: time.Second, Method: "nope"},
	} {
		if _, err := ForHost(model, nil, bad, "test"); err == nil {
			t.Errorf("ForHost(%+v) accepted", bad)
		}
	}
}

func TestLogAppendsWholeLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "watch.log")
	// A torn line, as a crash of the machine could leave.
	if err := os.WriteFile(path, []byte(`{"time":"2026-01-01T00:00:00Z","event":"start"}`+"\n"+`{"time":"20`), 0o644); err != nil {
		t.Fatal(err)
	}
	log, err := OpenLog("log", path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := log.Write(Event{Time: time.Unix(int64(i), 0), Event: EventChange, Changes: []Change{{"timer_slack", "1ns", "2ns"}}}); err != nil {
			t.Fatal(err)
		}
	}
	log.Close()
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines, want 5:\n%s", len(lines), data)
	}
	for i, line := range lines {
		var e Event
		err := json.Unmarshal([]byte(line), &e)
		if (err != nil) != (i == 1) {
			t.Errorf("line %d %q: %v", i+1, line, err)
		}
	}
	if _, err := OpenLog("log", t.TempDir()); err == nil {
		t.Error("a directory was opened as the log")
	}
}

func TestWriteLineIsOneWrite(t *testing.T) {
	var w countingWriter
	if err := WriteLine(&w, Event{Event: EventSummary, Summary: &Summary{Lateness: newLateness("sleep", time.Millisecond)}}); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(w.buf.Bytes()))
	if w.writes != 1 || !sc.Scan() || !json.Valid(sc.Bytes()) || sc.Scan() {
		t.Errorf("%d writes of %q, want one JSON line", w.writes, w.buf.String())
	}
}

type countingWriter struct {
	buf    bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) { w.writes++; return w.buf.Write(p) }

// BenchmarkLogWrite is the cost of a log line, synced (Log.Write) and
// not (WriteLine alone), side by side on the same disk: a watch at the
// defaults writes about one line per burst and per change.
func BenchmarkLogWrite(b *testing.B) {
	e := Event{Time: time.Unix(1, 0), Event: EventBurst, Burst: &Burst{Method: "sleep", DelayNs: 1e6, Waits: 200, P50Ns: 60e3, P99Ns: 90e3, MaxNs: 120e3}}
	log, err := OpenLog("log", filepath.Join(b.TempDir(), "watch.log"))
	if err != nil {
		b.Fatal(err)
	}
	defer log.Close()
	b.Run("synced", func(b *testing.B) {
		for range b.N {
			if err := log.Write(e); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unsynced", func(b *testing.B) {
		for range b.N {
			if err := WriteLine(log.f, e); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestStartOnFirstSuccessfulRead: a first read that fails is an error
// event, and the start event comes with the first read that succeeds.
func TestStartOnFirstSuccessfulRead(t *testing.T) {
	a := &timerstate.State{TickNs: 4e6, TimerSlackNs: 50_000}
	clock := newFakeClock()
	var got events
	o := Options{Every: time.Second, MeasureEvery: 10 * time.Second, Method: "clock-abs", Delay: time.Millisecond, Waits: 1,
		Read:    script(nil, a, a),
		Measure: func(context.Context) ([]int64, error) { return []int64{500}, nil },
		Clock:   clock, Emit: got.emit,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		if _, err := Run(ctx, o); err != nil {
			t.Error(err)
		}
		close(done)
	}()
	clock.fire(time.Second)
	clock.fire(time.Second)
	cancel()
	<-done
	if want := "error start summary"; strings.Join(got.kinds(), " ") != want {
		t.Errorf("events %v, want %s", got.kinds(), want)
	}
}

// TestHoldersNeedElevationOnWindows: on Windows (the model) without
// elevation, watch does not try to name holders; the start event says
// why, once. Elevated, it reads them.
func TestHoldersNeedElevationOnWindows(t *testing.T) {
	model, _ := sim.NewHost("knee-26100", 1)
	flags := Flags{Every: time.Second, MeasureEvery: 10 * time.Second}
	sys := &sim.System{}
	o, err := ForHost(model, sys, flags, "test")
	if err != nil {
		t.Fatal(err)
	}
	if o.Holders != nil || o.HoldersUnread != who.NeedsElevation {
		t.Fatalf("not elevated: holders read %v, unread %q", o.Holders != nil, o.HoldersUnread)
	}
	clock := newFakeClock()
	var got events
	o.Clock, o.Emit = clock, got.emit
	o.Measure = func(context.Context) ([]int64, error) { return []int64{500}, nil }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { Run(ctx, o); close(done) }()
	clock.fire(time.Second)
	cancel()
	<-done
	for _, e := range got.all {
		if want := e.Event == EventStart; (e.HoldersError == who.NeedsElevation) != want {
			t.Errorf("%s event: holders error %q", e.Event, e.HoldersError)
		}
	}
	sys.IsElevated = true
	if o, _ := ForHost(model, sys, flags, "test"); o.Holders == nil || o.HoldersUnread != "" {
		t.Errorf("elevated: holders read %v, unread %q", o.Holders != nil, o.HoldersUnread)
	}
}

// TestHolderReaderLooksForTheProgramsOfAWhileHolder: the startup holder's
// definition is read when it starts; its programs are looked for at each
// read.
func TestHolderReaderLooksForTheProgramsOfAWhileHolder(t *testing.T) {
	task, err := persist.TaskXML(persist.Task{Exe: `C:\Tools\tickscope-holder.exe`, Args: []string{"apply", "--ms", "1", "--while", "game.exe"},
		Description: "Holds 1 ms. " + persist.Marker("1"), DelaySeconds: 15})
	if err != nil {
		t.Fatal(err)
	}
	var running []sim.RunningProcess
	sys := &sim.System{HolderRunning: true, HolderPID: 9, Running: func() []sim.RunningProcess { return running }}
	st := sys.NewStartup("task")
	st.Definition = task
	read := holderReader(sys)
	h := read()
	if h.Held == nil || h.Held.Resolution100ns != 10000 || len(h.While) != 1 || len(h.HoldingFor) != 0 {
		t.Fatalf("waiting: %+v", h)
	}
	st.ReadErr = errors.New("the definition is read once per holder")
	running = []sim.RunningProcess{{PID: 4242, Name: "game.exe"}}
	if h := read(); len(h.HoldingFor) != 1 || h.HoldingFor[0].PID != 4242 || h.Held == nil {
		t.Fatalf("holding: %+v", h)
	}
	running = nil
	if h := read(); len(h.HoldingFor) != 0 || len(h.While) != 1 {
		t.Fatalf("waiting again: %+v", h)
	}
	// A scan that fails is said, not shown as none running.
	sys.ScanErr = errors.New("snapshot failed (test)")
	if h := read(); h.WhileError != "looking for game.exe: snapshot failed (test)" {
		t.Errorf("a failed scan: %+v", h)
	}
	sys.ScanErr = nil
	// The holder stops: its scanner is closed.
	sys.HolderRunning = false
	read()
	if sys.OpenScanners != 0 {
		t.Errorf("%d scanners open after the holder stopped", sys.OpenScanners)
	}
}

// SIMULATED: a burst across a 3 s suspend of the machine (the suspended
// scenario's, 1 s into the run: the first burst at the 15.625 ms default
// tick lasts some 3 s) leaves out the wait across it, which is not the
// timer's lateness: no wake-up of the burst reads as 3 s late.
func TestForHostLeavesOutASuspend(t *testing.T) {
	model, err := sim.NewHost("suspended", 1)
	if err != nil {
		t.Fatal(err)
	}
	o, err := ForHost(model, nil, Flags{Every: time.Second, MeasureEvery: 10 * time.Second}, "test")
	if err != nil {
		t.Fatal(err)
	}
	lateness, err := o.Measure(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(lateness) != BurstWaits-1 {
		t.Errorf("burst: %d waits, want %d: all but the one across the suspend", len(lateness), BurstWaits-1)
	}
	for _, ns := range lateness {
		if ns > int64(16*time.Millisecond) {
			t.Fatalf("lateness %d ns: the suspend counted as the timer's", ns)
		}
	}
}
