package who

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeTracer records the calls in order and plays a session: records
// given to Rundown are delivered once it is called, and delivery ends
// when the session is stopped.
type fakeTracer struct {
	*fakeETW
	calls    []string
	records  []Record // delivered on Rundown
	failAt   string   // the call that fails
	failErr  error    // how, when not the default
	stopped  chan struct{}
	deliver  func(Record)
	afterRun func() // called after the rundown is delivered
	locked   bool   // this tracer holds the session's lock
}

// fakeETW is what processes share: ETW's sessions by name, and the
// cross-process lock.
type fakeETW struct {
	mu       sync.Mutex
	running  map[string]bool
	lockHeld bool
	// owner is the tracer whose session it is, so that one that stops it
	// ends that one's delivery.
	owner *fakeTracer
}

func newFake(leftover bool) *fakeTracer {
	etw := &fakeETW{running: map[string]bool{}}
	if leftover {
		etw.running[SessionName] = true
	}
	return etw.process()
}

// process is another tickscope on the same machine.
func (etw *fakeETW) process() *fakeTracer {
	return &fakeTracer{fakeETW: etw, stopped: make(chan struct{})}
}

func (f *fakeTracer) Lock() (func(), error) {
	if err := f.call("Lock"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lockHeld {
		return nil, fmt.Errorf("%w (process 99)", ErrBusy)
	}
	f.lockHeld, f.locked = true, true
	return func() {
		f.call("Unlock")
		f.mu.Lock()
		f.lockHeld, f.locked = false, false
		f.mu.Unlock()
	}, nil
}

func (f *fakeTracer) call(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failAt == name && errors.Is(f.failErr, ErrNeedsElevation) {
		f.calls = append(f.calls, name)
		return f.failErr
	}
	f.calls = append(f.calls, name)
	if f.failAt == name {
		return fmt.Errorf("%s: Access is denied.", name)
	}
	return nil
}

func (f *fakeTracer) Stop(name string) (bool, error) {
	if err := f.call("Stop " + name); err != nil {
		return false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	existed := f.running[name]
	if o := f.owner; existed && o != nil && o.deliver != nil {
		close(o.stopped)
		o.deliver = nil
	}
	delete(f.running, name)
	return existed, nil
}

func (f *fakeTracer) Start(name string) error {
	if err := f.call("Start " + name); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.running[name] {
		return SessionExists(errors.New("StartTraceW: Cannot create a file when that file already exists."))
	}
	f.running[name] = true
	f.owner = f
	return nil
}

func (f *fakeTracer) Consume(name string, each func(Record)) (<-chan struct{}, func() error, error) {
	if err := f.call("Consume " + name); err != nil {
		return nil, nil, err
	}
	f.mu.Lock()
	f.deliver = each
	stopped := f.stopped
	f.mu.Unlock()
	return stopped, func() error {
		<-stopped
		f.call("wait")
		return nil
	}, nil
}

func (f *fakeTracer) Enable() error { return f.call("Enable") }

func (f *fakeTracer) Rundown() error {
	if err := f.call("Rundown"); err != nil {
		return err
	}
	f.mu.Lock()
	deliver, records := f.deliver, f.records
	f.mu.Unlock()
	go func() {
		for _, r := range records {
			deliver(r)
		}
		if f.afterRun != nil {
			f.afterRun()
		}
	}()
	return nil
}

func (f *fakeTracer) sessionLeft() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.running[SessionName]
}

func record(t *testing.T, id uint16, version uint8, values map[string]uint32, name string) Record {
	t.Helper()
	payload, err := Encode(id, version, true, values, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	return Record{ID: id, Version: version, Pointer64: true, Payload: payload}
}

var fast = RundownTiming{Quiet: 20 * time.Millisecond, Most: 2 * time.Second}

func TestReadRundownNamesHoldersAndCleansUp(t *testing.T) {
	for _, leftover := range []bool{false, true} {
		t.Run(fmt.Sprintf("leftover=%v", leftover), func(t *testing.T) {
			f := newFake(leftover)
			f.records = []Record{
				record(t, 97, 0, map[string]uint32{"RequestedPeriod": 10000, "Pid": 20}, `\Device\HarddiskVolume3\chrome.exe`),
				{ID: 41, Payload: []byte{1}},    // another event
				{ID: 97, Payload: []byte{1, 2}}, // a timer event that does not decode
				record(t, 97, 0, map[string]uint32{"RequestedPeriod": 5000, "Pid": 4242}, `\Device\HarddiskVolume3\tickscope.exe`),
				record(t, 96, 1, map[string]uint32{"CurrentPeriod": 5000, "MinimumPeriod": 5000, "MaximumPeriod": 156250, "KernelRequestCount": 1, "KernelRequestedPeriod": 10000}, ""),
			}
			w, err := ReadRundown(context.Background(), f, 4242, fast)
			if err != nil {
				t.Fatal(err)
			}
			want := []Holder{{PID: 4242, Image: `\Device\HarddiskVolume3\tickscope.exe`, Period100ns: 5000, Self: true}, {PID: 20, Image: `\Device\HarddiskVolume3\chrome.exe`, Period100ns: 10000}}
			if !slices.Equal(w.Holders, want) || w.Timer == nil || *w.Timer != (TimerRundown{5000, 5000, 156250, 1, 10000}) {
				t.Errorf("rundown = %+v %+v", w.Holders, w.Timer)
			}
			wantCalls := []string{"Lock", "Stop tickscope-who", "Start tickscope-who", "Consume tickscope-who", "Enable", "Rundown", "Stop tickscope-who", "wait", "Unlock"}
			if !slices.Equal(f.calls, wantCalls) {
				t.Errorf("calls = %v, want %v", f.calls, wantCalls)
			}
			if f.sessionLeft() {
				t.Error("the session was left running")
			}
		})
	}
}

// Every failure after the session started stops it; a failure before
// leaves nothing to stop, and names the call.
func TestSessionStopsOnEveryPath(t *testing.T) {
	for _, failAt := range []string{"Stop tickscope-who", "Start tickscope-who", "Consume tickscope-who", "Enable", "Rundown"} {
		t.Run(failAt, func(t *testing.T) {
			f := newFake(false)
			f.failAt = failAt
			_, err := ReadRundown(context.Background(), f, 1, fast)
			if err == nil || !strings.Contains(err.Error(), failAt) {
				t.Fatalf("error %v, want one naming %s", err, failAt)
			}
			if f.sessionLeft() {
				t.Errorf("calls %v left the session running", f.calls)
			}
			if failAt == "Stop tickscope-who" && !errors.Is(err, ErrLeftover) {
				t.Errorf("error %v, want ErrLeftover", err)
			}
		})
	}
}

// Ctrl+C, ESC or the console closing end the context: the session stops.
func TestSubscribeStopsWhenTheContextEnds(t *testing.T) {
	f := newFake(true)
	f.records = []Record{record(t, 63, 1, map[string]uint32{"RequestedResolution": 10000, "Pid": 7}, "a.exe")}
	ctx, cancel := context.WithCancel(context.Background())
	var got []Event
	var mu sync.Mutex
	f.afterRun = cancel
	if err := Subscribe(ctx, f, nil, func(ev Event) { mu.Lock(); got = append(got, ev); mu.Unlock() }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].PID != 7 || got[0].Period100ns != 10000 {
		t.Errorf("events = %+v", got)
	}
	if f.sessionLeft() || !slices.Equal(f.calls[len(f.calls)-2:], []string{"wait", "Unlock"}) {
		t.Errorf("calls %v: the session must be stopped and delivery waited for", f.calls)
	}
}

// A panic while handling an event ends the session with an error instead
// of the process with the session running.
func TestSubscribeSurvivesAPanicInTheHandler(t *testing.T) {
	f := newFake(false)
	f.records = []Record{record(t, 63, 1, map[string]uint32{"RequestedResolution": 10000, "Pid": 7}, "a.exe")}
	err := Subscribe(context.Background(), f, nil, func(Event) { panic("boom") })
	if err == nil || !strings.Contains(err.Error(), "panic: boom") {
		t.Errorf("error %v", err)
	}
	if f.sessionLeft() {
		t.Error("the session was left running")
	}
}

// A session of SessionName whose lock another tickscope holds is live: a
// second tickscope waits up to LockWait, then says ErrBusy and leaves it
// running; with the lock free again, it reads as before.
func TestALiveSessionIsNeverStoppedByAnotherTickscope(t *testing.T) {
	defer func(w time.Duration) { LockWait = w }(LockWait)
	LockWait = 150 * time.Millisecond
	watcher := newFake(false)
	ctx, cancel := context.WithCancel(context.Background())
	subscribed := make(chan struct{})
	watcher.afterRun = func() { close(subscribed) }
	watching := make(chan error, 1)
	go func() { watching <- Subscribe(ctx, watcher, nil, func(Event) {}) }()
	<-subscribed

	other := watcher.process()
	other.records = []Record{record(t, 96, 1, map[string]uint32{"CurrentPeriod": 156250, "MinimumPeriod": 5000, "MaximumPeriod": 156250}, "")}
	_, err := ReadRundown(context.Background(), other, 1, fast)
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("read during another's watch: %v, want ErrBusy", err)
	}
	if slices.ContainsFunc(other.calls, func(c string) bool { return strings.HasPrefix(c, "Stop") }) {
		t.Errorf("the second tickscope called %v: it stopped a live session", other.calls)
	}
	if !watcher.sessionLeft() {
		t.Fatal("the watching tickscope's session is gone")
	}
	cancel()
	if err := <-watching; err != nil {
		t.Fatalf("the watch ended with %v", err)
	}
	if _, err := ReadRundown(context.Background(), other, 1, fast); err != nil {
		t.Errorf("read after the watch ended: %v", err)
	}
}

// Another program (logman stop, or a tickscope of an older version) stops
// the session: Subscribe says so instead of waiting for ctx with nothing
// coming.
func TestSubscribeSaysWhenDeliveryEndsBeforeItsContext(t *testing.T) {
	f := newFake(false)
	f.afterRun = func() { f.fakeETW.process().Stop(SessionName) }
	errc := make(chan error, 1)
	go func() { errc <- Subscribe(context.Background(), f, nil, func(Event) {}) }()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrDeliveryEnded) {
			t.Errorf("error %v, want ErrDeliveryEnded", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Subscribe still waits after its session was stopped")
	}
}

// Not elevated, ETW denies the first stop: that is the elevation sentence,
// not a leftover that could not be stopped.
func TestAccessDeniedSaysElevation(t *testing.T) {
	f := newFake(false)
	f.failAt, f.failErr = "Stop tickscope-who", fmt.Errorf("%w (ControlTraceW: Access is denied.)", ErrNeedsElevation)
	_, err := ReadRundown(context.Background(), f, 1, fast)
	if !errors.Is(err, ErrNeedsElevation) || errors.Is(err, ErrLeftover) || !strings.Contains(err.Error(), "elevated terminal") {
		t.Errorf("error %v, want the elevation sentence", err)
	}
}

// Without the timer's rundown no holder list is an answer: an error, never
// "no process holds a request"; stopped after it but before the rundown
// went quiet, the list is marked incomplete.
func TestReadRundownNeverReportsUnmeasuredHolders(t *testing.T) {
	holder := record(t, 97, 0, map[string]uint32{"RequestedPeriod": 10000, "Pid": 20}, `a.exe`)
	timer := record(t, 96, 1, map[string]uint32{"CurrentPeriod": 10000, "MinimumPeriod": 5000, "MaximumPeriod": 156250}, "")
	t.Run("nothing came", func(t *testing.T) {
		f := newFake(false)
		_, err := ReadRundown(context.Background(), f, 1, RundownTiming{Quiet: 20 * time.Millisecond, Most: 100 * time.Millisecond})
		if !errors.Is(err, ErrNoRundown) || !strings.Contains(err.Error(), "100ms") {
			t.Errorf("error %v, want ErrNoRundown naming the wait", err)
		}
	})
	t.Run("stopped before the timer's rundown", func(t *testing.T) {
		f := newFake(false)
		f.records = []Record{holder}
		ctx, cancel := context.WithCancel(context.Background())
		f.afterRun = cancel
		_, err := ReadRundown(ctx, f, 1, fast)
		if !errors.Is(err, ErrNoRundown) {
			t.Errorf("error %v, want ErrNoRundown", err)
		}
	})
	t.Run("stopped before quiet", func(t *testing.T) {
		f := newFake(false)
		f.records = []Record{timer, holder}
		ctx, cancel := context.WithCancel(context.Background())
		f.afterRun = cancel
		w, err := ReadRundown(ctx, f, 1, RundownTiming{Quiet: time.Second, Most: 2 * time.Second})
		if err != nil || !w.Incomplete || len(w.Holders) != 1 {
			t.Errorf("rundown %+v, %v: want the holder, marked incomplete", w, err)
		}
	})
	t.Run("went quiet", func(t *testing.T) {
		f := newFake(false)
		f.records = []Record{timer, holder}
		w, err := ReadRundown(context.Background(), f, 1, fast)
		if err != nil || w.Incomplete {
			t.Errorf("rundown %+v, %v: want complete", w, err)
		}
	})
}

// Each value on rundown asks the provider for its state again.
func TestSubscribeAsksForARundownWhenTold(t *testing.T) {
	f := newFake(false)
	again := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- Subscribe(ctx, f, again, func(Event) {}) }()
	again <- struct{}{}
	again <- struct{}{} // received only once the first was asked for
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range f.calls {
		if c == "Rundown" {
			n++
		}
	}
	if n < 2 {
		t.Errorf("calls %v: want the first rundown and the ones asked for", f.calls)
	}
}

// A read that finds another tickscope's session waits for it (up to
// LockWait) before its own rundown's time (timing.Most) starts: a read
// queued behind another for longer than Most still gets its rundown.
func TestReadRundownStartsItsClockOnceTheLockIsTaken(t *testing.T) {
	defer func(w time.Duration) { LockWait = w }(LockWait)
	LockWait = 10 * time.Second
	f := newFake(false)
	f.lockHeld = true // another tickscope's session, for longer than Most
	go func() {
		time.Sleep(1200 * time.Millisecond)
		f.mu.Lock()
		f.lockHeld = false
		f.mu.Unlock()
	}()
	f.records = []Record{record(t, 96, 1, map[string]uint32{"CurrentPeriod": 156250, "MinimumPeriod": 5000, "MaximumPeriod": 156250}, "")}
	w, err := ReadRundown(context.Background(), f, 1, RundownTiming{Quiet: 20 * time.Millisecond, Most: 800 * time.Millisecond})
	if err != nil {
		t.Fatalf("a read queued 1.2 s behind another, with 0.8 s for its rundown: %v", err)
	}
	if w.Timer == nil || w.Timer.Current100ns != 156250 {
		t.Errorf("rundown = %+v", w.Timer)
	}
}

// The lock's name can be taken by any user: a process that holds it
// while no session of SessionName runs is not another tickscope, and who
// reads as before, stopping no session (none can be a leftover it knows
// of) and never touching the lock.
func TestASquatterOnTheLockDoesNotMakeWhoBusy(t *testing.T) {
	defer func(w time.Duration) { LockWait = w }(LockWait)
	LockWait = 150 * time.Millisecond
	f := newFake(false)
	f.lockHeld = true // a squatter, for ever
	f.records = []Record{record(t, 96, 1, map[string]uint32{"CurrentPeriod": 156250, "MinimumPeriod": 5000, "MaximumPeriod": 156250}, "")}
	w, err := ReadRundown(context.Background(), f, 1, fast)
	if err != nil {
		t.Fatalf("read with the lock squatted: %v, want the rundown", err)
	}
	if w.Timer == nil || w.Timer.Current100ns != 156250 {
		t.Errorf("rundown %+v", w)
	}
	calls := slices.DeleteFunc(slices.Clone(f.calls), func(c string) bool { return c == "Lock" })
	wantCalls := []string{"Start tickscope-who", "Consume tickscope-who", "Enable", "Rundown", "Stop tickscope-who", "wait"}
	if !slices.Equal(calls, wantCalls) {
		t.Errorf("calls (Lock aside) = %v, want %v", calls, wantCalls)
	}
	if f.sessionLeft() {
		t.Error("the session was left running")
	}

	// And a watch.
	g := newFake(false)
	g.lockHeld = true
	ctx, cancel := context.WithCancel(context.Background())
	g.afterRun = cancel
	if err := Subscribe(ctx, g, nil, func(Event) {}); err != nil {
		t.Errorf("watch with the lock squatted: %v", err)
	}
	if g.sessionLeft() {
		t.Error("the watch's session was left running")
	}
}

// With the lock another's, a session of SessionName that runs is live as
// far as who can tell: ErrBusy, naming the lock's holder as before, and
// the session is left alone (a leftover and a squatter together look like
// a live session; only an administrator's logman stop ends it).
func TestASessionRunningWhileTheLockIsAnothersIsBusy(t *testing.T) {
	defer func(w time.Duration) { LockWait = w }(LockWait)
	LockWait = 150 * time.Millisecond
	f := newFake(true)
	f.lockHeld = true
	_, err := ReadRundown(context.Background(), f, 1, fast)
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "(process 99)") || errors.Is(err, ErrSessionExists) {
		t.Fatalf("error %v, want ErrBusy as the lock gave it", err)
	}
	if err.Error() != ErrBusy.Error()+" (process 99)" {
		t.Errorf("error %q: the busy message changed", err)
	}
	if slices.ContainsFunc(f.calls, func(c string) bool { return strings.HasPrefix(c, "Stop") }) {
		t.Errorf("calls %v: a session that may be live was stopped", f.calls)
	}
	if !f.sessionLeft() {
		t.Error("the session is gone")
	}
}

// A wait for the lock that ctx ends is not a reason to start a session
// without it.
func TestAWaitForTheLockEndedByItsContextStartsNothing(t *testing.T) {
	defer func(w time.Duration) { LockWait = w }(LockWait)
	LockWait = 10 * time.Second
	f := newFake(false)
	f.lockHeld = true
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := ReadRundown(ctx, f, 1, fast)
	if !errors.Is(err, ErrBusy) {
		t.Errorf("error %v, want ErrBusy", err)
	}
	if slices.ContainsFunc(f.calls, func(c string) bool { return c != "Lock" }) {
		t.Errorf("calls %v after ctx ended the wait", f.calls)
	}
}

// SessionExists keeps the error's words and adds ErrSessionExists.
func TestSessionExistsKeepsTheMessage(t *testing.T) {
	inner := errors.New("StartTraceW(tickscope-who): Cannot create a file when that file already exists.")
	err := SessionExists(inner)
	if err.Error() != inner.Error() || !errors.Is(err, inner) || !errors.Is(err, ErrSessionExists) {
		t.Errorf("SessionExists(%v) = %v", inner, err)
	}
}
