package explain

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/tickscope/tickscope/internal/attribution"
	"github.com/tickscope/tickscope/internal/etwkernel"
	"github.com/tickscope/tickscope/internal/procstat"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/winapi"
)

// Windows: layer 1 only, from a real-time kernel ETW session of
// tickscope's own, etwkernel.SessionName: a private system logger session
// (EVENT_TRACE_SYSTEM_LOGGER_MODE, Windows 8 and later), not the NT
// Kernel Logger, so that it runs beside WPR, xperf or LatencyMon and
// never stops theirs (etwkernel.SessionName says why, with the Microsoft
// Learn page). It enables DPC, ISR, CSwitch, ReadyThread and image events
// with QPC time stamps and is read with PROCESS_TRACE_MODE_EVENT_RECORD |
// REAL_TIME | RAW_TIMESTAMP on a goroutine locked to its thread; the
// records are decoded by etwkernel and each late wait is attributed by
// etw.go.
//
// NOT VERIFIED on real Windows: no machine here runs it, and Wine 8 has
// no kernel ETW providers (its OpenTraceW refuses a session). Built and
// vetted for windows only; that a private system logger session delivers
// these events, the image rundown at its start, the raw QPC stamps and
// the layouts are Microsoft Learn's word, held to synthetic records in
// etwkernel's and explain's tests, not seen.

// NewSystem is this machine's System.
func NewSystem() System { return &windowsSystem{} }

func supported() error { return nil }

type windowsSystem struct {
	// period is the timer period in force (ns) as the measuring thread
	// began, read by Thread, which the observer calls once the setting is
	// applied; 0 when not read.
	period atomic.Int64
}

func (s *windowsSystem) CanTrace() (bool, string) {
	if !windows.GetCurrentProcessToken().IsElevated() {
		return false, NeedsElevation
	}
	return true, ""
}

func (s *windowsSystem) chooseLayer(asked Layer, canTrace bool, whyNot string) (Chosen, error) {
	return chooseETW(asked, canTrace, whyNot)
}

// errNoCounters is Counters on Windows, which has none of Linux's.
var errNoCounters = errors.New("windows has no /proc or /sys counters (interrupts, softirqs, steal, cpuidle): the notes give the session's ISR and DPC time by driver instead")

func (s *windowsSystem) Counters() (procstat.Snapshot, error) {
	return procstat.Snapshot{}, errNoCounters
}

func (s *windowsSystem) Thread() (Thread, error) {
	if _, _, current, err := winapi.NtQueryTimerResolution(); err == nil {
		s.period.Store(int64(current) * 100)
	}
	return windowsThread(windows.GetCurrentThreadId()), nil
}

type windowsThread uint32

// errNoRunQueue is SchedStat on Windows (etw.go's NoWindowsLayer0 says
// why there is no layer 0).
var errNoRunQueue = errors.New("windows keeps no per-thread run-queue time: the session's ReadyThread and CSwitch events give the ready-to-run delay instead")

func (t windowsThread) TID() int { return int(t) }
func (windowsThread) SchedStat() (procstat.SchedStat, error) {
	return procstat.SchedStat{}, errNoRunQueue
}

// ErrSessionBusy is another tickscope explain tracing now: its session is
// left alone.
var ErrSessionBusy = errors.New("another tickscope explain is tracing (the ETW session " + etwkernel.SessionName + " runs); try again when it is done, or stop a stale one with: logman stop " + etwkernel.SessionName + " -ets")

// lockWait is how long StartTrace waits for the session's lock before it
// starts without it (the lock may be a squatter's: see lockSession).
const lockWait = 60 * time.Second

// lockSession takes Global\tickscope-explain, a named mutex held for the
// session's life, which Windows abandons when the thread that owns it
// ends however its process ends ("CreateMutexW function", "Mutex
// Objects", Microsoft Learn). With it held, a session of our name is a
// killed run's, and is stopped. As with who's lock (who.SessionName),
// any user can create the mutex first and hold it, so it is not what
// says "busy": after lockWait without it, the session is started without
// stopping any, and StartTraceW's ERROR_ALREADY_EXISTS, which only a
// process allowed to start sessions can cause, says ErrSessionBusy. A
// mutex belongs to a thread: a goroutine locked to its thread takes it,
// holds it until release, and ends, taking its thread with it.
func lockSession(ctx context.Context, waiting func()) (release func(), err error) {
	name, err := windows.UTF16PtrFromString(`Global\` + etwkernel.SessionName)
	if err != nil {
		return nil, err
	}
	got := make(chan error, 1)
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		h, err := windows.CreateMutex(nil, false, name)
		if h == 0 {
			if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
				// Another user made the mutex first and keeps it from
				// us: as a lock held too long, it decides nothing.
				got <- errLockTimeout
				return
			}
			got <- &seam.OSError{Call: `CreateMutexW(Global\` + etwkernel.SessionName + ")", Err: err}
			return
		}
		defer windows.CloseHandle(h)
		deadline := time.Now().Add(lockWait)
		told := false
		for {
			ev, err := windows.WaitForSingleObject(h, 100)
			switch {
			case ev == windows.WAIT_OBJECT_0 || ev == windows.WAIT_ABANDONED:
				got <- nil
				<-done
				windows.ReleaseMutex(h)
				return
			case ev == uint32(windows.WAIT_TIMEOUT):
				if !told {
					told = true
					waiting()
				}
				if ctx.Err() != nil {
					got <- ctx.Err()
					return
				}
				if time.Now().After(deadline) {
					got <- errLockTimeout
					return
				}
			default:
				got <- &seam.OSError{Call: "WaitForSingleObject(the explain lock)", Err: err}
				return
			}
		}
	}()
	if err := <-got; err != nil {
		<-ended
		return nil, err
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			<-ended
		})
	}, nil
}

var errLockTimeout = errors.New("the explain lock stayed held")

// etwError is a failed call that controls a session: ERROR_ACCESS_DENIED
// is what a terminal that is not elevated gets.
func etwError(call string, err error) error {
	if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		return fmt.Errorf("layer 1 cannot run here: %s (%w)", NeedsElevation, &seam.OSError{Call: call, Err: err})
	}
	return &seam.OSError{Call: call, Err: err}
}

// newProperties is a properties block, on the heap and pinned until
// unpin: ETW writes into it during the call, and a goroutine's stack may
// move meanwhile (the lesson of taskschd_windows.go's COM calls).
func newProperties(block []byte, pin *runtime.Pinner) *winapi.TraceProperties {
	p := new(winapi.TraceProperties)
	pin.Pin(p)
	copy(unsafe.Slice((*byte)(unsafe.Pointer(p)), unsafe.Sizeof(*p)), block)
	return p
}

// propertiesBytes is the block as bytes, for etwkernel.Lost.
func propertiesBytes(p *winapi.TraceProperties) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), unsafe.Sizeof(*p))
}

// stopSession stops the session of our name, saying whether one ran, and
// what it lost.
func stopSession() (existed bool, lostEvents, lostBuffers uint32, err error) {
	var pin runtime.Pinner
	defer pin.Unpin()
	name, err := windows.UTF16PtrFromString(etwkernel.SessionName)
	if err != nil {
		return false, 0, 0, err
	}
	pin.Pin(name)
	props := newProperties(etwkernel.StopProperties(), &pin)
	err = winapi.ControlTrace(0, name, props, winapi.EVENT_TRACE_CONTROL_STOP)
	switch {
	case err == nil:
		ev, rt := etwkernel.Lost(propertiesBytes(props))
		return true, ev, rt, nil
	case errors.Is(err, windows.ERROR_WMI_INSTANCE_NOT_FOUND):
		return false, 0, 0, nil
	}
	return false, 0, 0, etwError("ControlTraceW("+etwkernel.SessionName+", EVENT_TRACE_CONTROL_STOP)", err)
}

// The kernel classes the consumer decodes, as ETW gives them.
var etwClasses = func() map[windows.GUID]bool {
	m := map[windows.GUID]bool{}
	for _, g := range []etwkernel.GUID{etwkernel.PerfInfo, etwkernel.Thread, etwkernel.Image} {
		m[windows.GUID{Data1: g.Data1, Data2: g.Data2, Data3: g.Data3, Data4: g.Data4}] = true
	}
	return m
}()

// The event callback: windows.NewCallback's slots are few and never
// freed, so there is one, which hands records to the trace of the moment.
var (
	etwConsumer struct {
		sync.Mutex
		t *windowsTrace
	}
	etwCallback = windows.NewCallback(func(rec *winapi.EventRecord) uintptr {
		if !etwClasses[rec.EventHeader.ProviderID] {
			return 0
		}
		etwConsumer.Lock()
		t := etwConsumer.t
		etwConsumer.Unlock()
		if t != nil {
			t.take(rec)
		}
		return 0
	})
)

// windowsTrace is a running session.
type windowsTrace struct {
	*etwTrace // set by Stop
	sys       *windowsSystem
	release   func()
	handle    uint64    // StartTraceW's
	consumer  uint64    // OpenTraceW's
	handles   [1]uint64 // ProcessTrace's, holding consumer
	logfile   *winapi.EventTraceLogfile
	pin       runtime.Pinner
	freq      int64
	info      TraceInfo
	stopped   bool
	closed    bool
	ended     chan struct{}
	delivered error // ProcessTrace's, set before ended closes

	// Written by the callback only, on ProcessTrace's thread; read once
	// ended is closed.
	events    []etwkernel.Event
	seen      map[string]bool
	undecoded int
	dropped   int
	droppedAt int64
	panicked  error

	// pendingLost is ETW's EventsLost and RealTimeBuffersLost, read as
	// the session stopped.
	pendingLost [2]uint64
}

func (s *windowsSystem) StartTrace(ctx context.Context, waiting func()) (_ Trace, err error) {
	s.period.Store(0)
	release, lerr := lockSession(ctx, waiting)
	switch {
	case errors.Is(lerr, errLockTimeout):
		release = func() {}
	case lerr != nil:
		return nil, lerr
	}
	t := &windowsTrace{sys: s, release: release, freq: winapi.QPCFrequency(), ended: make(chan struct{}), seen: map[string]bool{},
		info: TraceInfo{Instance: etwkernel.SessionName, Missing: []string{}}}
	defer func() {
		if err != nil {
			t.Close()
		}
	}()
	if lerr == nil {
		existed, _, _, err := stopSession()
		if err != nil {
			return nil, fmt.Errorf("stopping a session left by an earlier run: %w", err)
		}
		t.info.RemovedLeftover = existed
	}
	props := newProperties(etwkernel.ExplainSession().Properties(), &t.pin)
	if err := winapi.StartTrace(&t.handle, etwkernel.SessionName, props); err != nil {
		t.handle = 0
		if errors.Is(err, windows.ERROR_ALREADY_EXISTS) {
			return nil, fmt.Errorf("%w (%w)", ErrSessionBusy, &seam.OSError{Call: "StartTraceW(" + etwkernel.SessionName + ")", Err: err})
		}
		return nil, etwError("StartTraceW("+etwkernel.SessionName+")", err)
	}
	etwConsumer.Lock()
	if etwConsumer.t != nil {
		etwConsumer.Unlock()
		return nil, errors.New("another kernel session is being read in this process")
	}
	etwConsumer.t = t
	etwConsumer.Unlock()
	name, err := windows.UTF16PtrFromString(etwkernel.SessionName)
	if err != nil {
		return nil, err
	}
	t.pin.Pin(name)
	t.logfile = &winapi.EventTraceLogfile{
		LoggerName:          name,
		ProcessTraceMode:    winapi.PROCESS_TRACE_MODE_REAL_TIME | winapi.PROCESS_TRACE_MODE_EVENT_RECORD | winapi.PROCESS_TRACE_MODE_RAW_TIMESTAMP,
		EventRecordCallback: etwCallback,
	}
	t.pin.Pin(t.logfile)
	if t.consumer, err = winapi.OpenTrace(t.logfile); err != nil {
		t.consumer = 0
		return nil, &seam.OSError{Call: "OpenTraceW(" + etwkernel.SessionName + ")", Err: err}
	}
	// The handle array is the trace's, pinned: the callback runs Go code
	// on the consuming goroutine during ProcessTrace, and a stack that
	// grows would move an array of its own.
	t.handles[0] = t.consumer
	t.pin.Pin(&t.handles[0])
	go func() {
		defer close(t.ended)
		// The callback runs on this thread, which blocks in ProcessTrace
		// until the session stops.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := winapi.ProcessTrace(t.handles[:], nil, nil)
		if err != nil && !errors.Is(err, windows.ERROR_CANCELLED) {
			t.delivered = &seam.OSError{Call: "ProcessTrace(" + etwkernel.SessionName + ")", Err: err}
		}
	}()
	return t, nil
}

// take decodes one record of the classes explain reads, on ProcessTrace's
// thread. A panic here would end the process with the session running:
// it is kept and said by Stop instead.
func (t *windowsTrace) take(rec *winapi.EventRecord) {
	defer func() {
		if p := recover(); p != nil && t.panicked == nil {
			t.panicked = fmt.Errorf("decoding a kernel event: panic: %v", p)
		}
	}()
	raw := unsafe.Slice((*byte)(unsafe.Pointer(rec)), etwkernel.RecordSize)
	var user []byte
	if rec.UserData != nil && rec.UserDataLength > 0 {
		user = unsafe.Slice((*byte)(rec.UserData), rec.UserDataLength)
	}
	r, err := etwkernel.ParseRecord(raw, user)
	if err != nil {
		t.undecoded++
		return
	}
	ev, err := etwkernel.Decode(r)
	switch {
	case errors.Is(err, etwkernel.ErrNotDecoded):
		return // another event of these classes, not enabled for explain
	case err != nil:
		t.undecoded++
		return
	}
	ev = etwkernel.InNanos(ev, t.freq)
	t.seen[eventClass(ev)] = true
	if len(t.events) >= MaxETWEvents {
		if t.dropped == 0 {
			t.droppedAt = ev.Meta().At
		}
		t.dropped++
		return
	}
	t.events = append(t.events, ev)
}

func (t *windowsTrace) Info() TraceInfo { return t.info }

// endDelivery stops the session (once) and waits for ProcessTrace to
// return, closing the consumer's handle.
func (t *windowsTrace) endDelivery() error {
	var err error
	if !t.stopped && t.handle != 0 {
		t.stopped = true
		var pin runtime.Pinner
		props := newProperties(etwkernel.StopProperties(), &pin)
		cerr := winapi.ControlTrace(t.handle, nil, props, winapi.EVENT_TRACE_CONTROL_STOP)
		ev, rt := etwkernel.Lost(propertiesBytes(props))
		pin.Unpin()
		switch {
		case cerr == nil:
			t.info.Removed = true
			t.lostCounts(ev, rt)
		case errors.Is(cerr, windows.ERROR_WMI_INSTANCE_NOT_FOUND):
			t.info.Removed = true
			err = errors.New("the session " + etwkernel.SessionName + " was stopped by another program before tickscope stopped it")
		default:
			err = etwError("ControlTraceW("+etwkernel.SessionName+", EVENT_TRACE_CONTROL_STOP)", cerr)
		}
	}
	if t.consumer != 0 {
		// Stopping the session ends ProcessTrace; CloseTrace ends it too,
		// should the stop not reach it.
		select {
		case <-t.ended:
		case <-time.After(3 * time.Second):
		}
		winapi.CloseTrace(t.consumer)
		select {
		case <-t.ended:
			err = errors.Join(err, t.delivered)
		case <-time.After(2 * time.Second):
			err = errors.Join(err, &seam.OSError{Call: "ProcessTrace", Err: errors.New("still delivering 5 s after its session was stopped and its handle closed")})
		}
		t.consumer = 0
	}
	etwConsumer.Lock()
	if etwConsumer.t == t {
		etwConsumer.t = nil
	}
	etwConsumer.Unlock()
	return err
}

// lostCounts keeps what ETW says was lost.
// Lost counts events: a real-time buffer lost held many, and is said
// apart (the trace's notes).
func (t *windowsTrace) lostCounts(events, buffers uint32) {
	t.info.Lost = uint64(events)
	t.pendingLost = [2]uint64{uint64(events), uint64(buffers)}
}

func (t *windowsTrace) Stop() ([]attribution.Event, []attribution.Gap, error) {
	err := t.endDelivery()
	select {
	case <-t.ended:
	default:
		return nil, nil, errors.Join(err, errors.New("the session's events are still being delivered"))
	}
	if t.panicked != nil {
		err = errors.Join(err, t.panicked)
	}
	x := newETWTrace(t.events, time.Duration(t.sys.period.Load()))
	x.lostEvents, x.lostBuffers = t.pendingLost[0], t.pendingLost[1]
	x.undecoded, x.dropped, x.droppedAt = t.undecoded, t.dropped, t.droppedAt
	t.etwTrace = x
	t.info.Events = len(t.events)
	for _, c := range []string{"DPC", "ISR", "CSwitch", "ReadyThread", "Image"} {
		if !t.seen[c] {
			t.info.Missing = append(t.info.Missing, c)
		}
	}
	if err != nil {
		err = fmt.Errorf("ETW: %w", err)
	}
	return nil, nil, err
}

func (t *windowsTrace) Close() error {
	if t.closed {
		return nil
	}
	t.closed = true
	err := t.endDelivery()
	select {
	case <-t.ended:
		t.pin.Unpin()
	default:
		// ProcessTrace has not returned: ETW may still write to what is
		// pinned, which is left pinned (leaked) rather than freed.
	}
	t.release()
	return err
}
