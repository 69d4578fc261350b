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
	mu       sync.Mutex
	calls    []string
	running  map[string]bool // sessions by name, as ETW keeps them
	records  []Record        // delivered on Rundown
	failAt   string          // the call that fails
	stopped  chan struct{}
	deliver  func(Record)
	afterRun func() // called after the rundown is delivered
}

func newFake(leftover bool) *fakeTracer {
	f := &fakeTracer{running: map[string]bool{}, stopped: make(chan struct{})}
	if leftover {
		f.running[SessionName] = true
	}
	return f
}

func (f *fakeTracer) call(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
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
	if existed && f.deliver != nil {
		close(f.stopped)
		f.deliver = nil
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
		return errors.New("StartTraceW: Cannot create a file when that file already exists.")
	}
	f.running[name] = true
	return nil
}

func (f *fakeTracer) Consume(name string, each func(Record)) (func() error, error) {
	if err := f.call("Consume " + name); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.deliver = each
	stopped := f.stopped
	f.mu.Unlock()
	return func() error {
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
			wantCalls := []string{"Stop tickscope-who", "Start tickscope-who", "Consume tickscope-who", "Enable", "Rundown", "Stop tickscope-who", "wait"}
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
	if err := Subscribe(ctx, f, func(ev Event) { mu.Lock(); got = append(got, ev); mu.Unlock() }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].PID != 7 || got[0].Period100ns != 10000 {
		t.Errorf("events = %+v", got)
	}
	if f.sessionLeft() || f.calls[len(f.calls)-1] != "wait" {
		t.Errorf("calls %v: the session must be stopped and delivery waited for", f.calls)
	}
}

// A panic while handling an event ends the session with an error instead
// of the process with the session running.
func TestSubscribeSurvivesAPanicInTheHandler(t *testing.T) {
	f := newFake(false)
	f.records = []Record{record(t, 63, 1, map[string]uint32{"RequestedResolution": 10000, "Pid": 7}, "a.exe")}
	err := Subscribe(context.Background(), f, func(Event) { panic("boom") })
	if err == nil || !strings.Contains(err.Error(), "panic: boom") {
		t.Errorf("error %v", err)
	}
	if f.sessionLeft() {
		t.Error("the session was left running")
	}
}
