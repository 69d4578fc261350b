package who

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// SessionName is the one ETW session who starts. A session outlives the
// process that started it, so a fixed name lets the next run stop the one
// a killed tickscope left behind. ETW names are machine-wide, so a session
// of this name may also be another tickscope's, running now: Subscribe
// tells the two apart with a cross-process lock (Tracer.Lock) held for the
// session's life.
//
// That lock is a named mutex, which any user can create first and hold
// ("CreateMutexW function (synchapi.h)", Microsoft Learn: a name in the
// global namespace can be squatted by another process). So it is not what
// says "another who is running": the session is. Starting a session needs
// an administrator (or a member of Performance Log Users), and StartTraceW
// fails with ERROR_ALREADY_EXISTS while one of the name runs
// ("StartTraceW function (evntrace.h)", Microsoft Learn), which no other
// user can fake. The lock only tells a live session from a leftover one:
// held by this process, any session of the name is a killed run's, and is
// stopped; held by another for LockWait, the session is started without
// stopping any, and only ERROR_ALREADY_EXISTS then says ErrBusy. A
// squatter on the lock alone thus never makes who busy; a squatter and a
// leftover session together do (nothing then tells the leftover from a
// live one), until an administrator stops it (logman stop tickscope-who
// -ets). A private namespace bounded by the Administrators SID
// ("CreatePrivateNamespaceW function (namespaceapi.h)", Microsoft Learn)
// would make the lock itself unsquattable, at six more calls, and Wine
// 8.0, where tickscope's Windows tests run, has none: its
// CreateBoundaryDescriptorW is a stub and kernel32 has no
// AddSIDToBoundaryDescriptor.
const SessionName = "tickscope-who"

// Tracer is the ETW calls one session needs; package platform implements
// it with advapi32 (internal/winapi), tests with a fake.
type Tracer interface {
	// Lock takes the cross-process lock held for the whole life of a
	// session of SessionName (package platform: System.Lock(seam.WhoLock)),
	// which the OS drops when its holder exits however it exits. When
	// another process holds it (another tickscope, or any user's process
	// squatting its name), the error wraps ErrBusy.
	Lock() (release func(), err error)
	// Stop stops the session named name (ControlTraceW,
	// EVENT_TRACE_CONTROL_STOP), saying whether one ran.
	Stop(name string) (existed bool, err error)
	// Start starts a real-time session named name (StartTraceW). When a
	// session of that name runs already (ERROR_ALREADY_EXISTS), the error
	// wraps ErrSessionExists (SessionExists).
	Start(name string) error
	// Consume opens the session for reading (OpenTraceW) and delivers its
	// records to each, on a goroutine of its own (ProcessTrace), until the
	// session stops; ended is closed once delivery has ended, however it
	// ended; wait blocks until it has and closes the handle (CloseTrace).
	Consume(name string, each func(Record)) (ended <-chan struct{}, wait func() error, err error)
	// Enable enables Microsoft-Windows-Kernel-Power in the session at the
	// informational level with KernelPowerKeyword (EnableTraceEx2,
	// EVENT_CONTROL_CODE_ENABLE_PROVIDER).
	Enable() error
	// Rundown asks the provider for its state (EnableTraceEx2,
	// EVENT_CONTROL_CODE_CAPTURE_STATE) and flushes the session's buffers
	// (ControlTraceW, EVENT_TRACE_CONTROL_FLUSH), so that the rundown is
	// delivered now.
	Rundown() error
}

// ErrLeftover wraps a failure to stop a session of SessionName left by an
// earlier run.
var ErrLeftover = errors.New("a session left by an earlier tickscope could not be stopped")

// ErrBusy says that another tickscope runs the session of SessionName now:
// it is left alone.
var ErrBusy = errors.New("another tickscope is reading who holds the timer; try again when it is done")

// ErrSessionExists is Tracer.Start's error when a session of the name
// runs already: StartTraceW's ERROR_ALREADY_EXISTS.
var ErrSessionExists = errors.New("an ETW session of that name runs already")

// SessionExists is err, said as err says it, wrapping ErrSessionExists too.
func SessionExists(err error) error { return sessionExists{err} }

type sessionExists struct{ error }

func (e sessionExists) Unwrap() []error { return []error{e.error, ErrSessionExists} }

// NeedsElevation is what who says when ETW refuses it: a session needs an
// administrator.
const NeedsElevation = "naming the processes that hold the timer needs an elevated terminal (an ETW session on Microsoft-Windows-Kernel-Power): run tickscope who in a terminal started with \"Run as administrator\""

// ErrNeedsElevation is a Tracer call refused for want of elevation
// (ERROR_ACCESS_DENIED): package platform wraps it.
var ErrNeedsElevation = errors.New(NeedsElevation)

// ErrDeliveryEnded says that the session stopped delivering before
// tickscope stopped it: whatever came after is unknown.
var ErrDeliveryEnded = errors.New("the ETW session " + SessionName + " stopped delivering Kernel-Power events before tickscope stopped it (stopped by another program?)")

// LockWait is how long Subscribe waits for another tickscope's session to
// end before it says ErrBusy: longer than a rundown read takes
// (DefaultRundownTiming.Most), so that two short reads (ui's, status's)
// queue instead of failing.
var LockWait = 4 * time.Second

// lockRetry is how often Subscribe tries the lock again while it waits.
const lockRetry = 100 * time.Millisecond

// lock takes the session's lock, waiting up to LockWait while another
// process holds it. Held by another all that time, it returns no release
// and busy, the ErrBusy that says so: the session is then another
// tickscope's only if it runs (runSession), as the lock may be a
// squatter's (SessionName). ctx ending while it waits is err.
func lock(ctx context.Context, t Tracer) (release func(), busy, err error) {
	deadline := time.Now().Add(LockWait)
	for {
		release, err := t.Lock()
		switch {
		case err == nil:
			return release, nil, nil
		case !errors.Is(err, ErrBusy):
			return nil, nil, err
		case time.Now().After(deadline):
			return nil, err, nil
		}
		select {
		case <-ctx.Done():
			return nil, nil, err
		case <-time.After(lockRetry):
		}
	}
}

// Subscribe runs the session: it takes the session's lock (waiting up to
// LockWait; a session of SessionName whose lock another holds is live, and
// is never stopped: with the lock still another's, a session of the name
// that runs is ErrBusy, and none running is started without the lock),
// stops a leftover session of SessionName (with the lock taken, any is a
// killed run's), starts its own, reads it, enables the provider and asks for its rundown, then calls
// each for every timer event decoded, until ctx ends, asking for a fresh
// rundown at each value received on rundown (nil: never). Delivery that ends
// before ctx does gives ErrDeliveryEnded. It stops the session on every
// path out (an error, ctx ending by ESC, Ctrl+C or the console closing, a
// panic in each), waits for delivery to end, and only then drops the lock.
// Records of other events, and timer events that do not decode, are
// skipped.
func Subscribe(ctx context.Context, t Tracer, rundown <-chan struct{}, each func(Event)) error {
	release, busy, err := lock(ctx, t)
	if err != nil {
		return err
	}
	if release != nil {
		defer release()
	}
	return runSession(ctx, t, busy, rundown, each)
}

// runSession is Subscribe once lock has answered: with the lock taken
// (busy nil) it stops a leftover session first; with the lock another's
// (busy, the ErrBusy lock gave) it stops none, and a session of the name
// that runs already is busy.
func runSession(ctx context.Context, t Tracer, busy error, rundown <-chan struct{}, each func(Event)) (err error) {
	if busy == nil {
		if _, err := t.Stop(SessionName); err != nil {
			if errors.Is(err, ErrNeedsElevation) {
				return err
			}
			return fmt.Errorf("%w: %w", ErrLeftover, err)
		}
	}
	if err := t.Start(SessionName); err != nil {
		if busy != nil && errors.Is(err, ErrSessionExists) {
			return busy
		}
		return err
	}
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		_, err := t.Stop(SessionName)
		return err
	}
	defer func() {
		if stopErr := stop(); err == nil {
			err = stopErr
		}
	}()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	panicked := make(chan error, 1)
	ended, wait, err := t.Consume(SessionName, func(r Record) {
		// A panic on the delivering thread would end the process with the
		// session running: it ends the session instead.
		defer func() {
			if p := recover(); p != nil {
				select {
				case panicked <- fmt.Errorf("handling Kernel-Power event %d: panic: %v", r.ID, p):
				default:
				}
				cancel()
			}
		}()
		if ev, err := Decode(r); err == nil {
			each(ev)
		}
	})
	if err != nil {
		return err
	}
	defer func() {
		// Stopping the session ends ProcessTrace's delivery.
		stopErr := stop()
		if waitErr := wait(); err == nil {
			err = waitErr
		}
		if err == nil {
			err = stopErr
		}
	}()
	if err := t.Enable(); err != nil {
		return err
	}
	if err := t.Rundown(); err != nil {
		return err
	}
	for watching := true; watching; {
		select {
		case <-ctx.Done():
			watching = false
		case <-ended:
			if ctx.Err() == nil {
				return ErrDeliveryEnded
			}
			watching = false
		case <-rundown:
			if err := t.Rundown(); err != nil {
				return err
			}
		}
	}
	select {
	case err := <-panicked:
		return err
	default:
		return nil
	}
}

// RundownTiming bounds how long ReadRundown waits for the rundown: ETW
// does not mark its end, so it ends once no timer event has come for
// Quiet after the timer's own rundown (event 96), or after Most.
type RundownTiming struct {
	Quiet, Most time.Duration
}

// DefaultRundownTiming: the rundown is delivered within a flush, well
// under a second; FlushTimer is 1 s.
var DefaultRundownTiming = RundownTiming{Quiet: 300 * time.Millisecond, Most: 3 * time.Second}

// ErrNoRundown says the rundown did not come: without the timer's own
// rundown (event 96) nothing says the holders read are all of them.
var ErrNoRundown = errors.New("the Kernel-Power rundown did not arrive")

// ReadRundown runs a session just long enough to read the rundown, and
// returns the holders it named, finest first, with self (tickscope's
// process id) marked. Without the timer's rundown (event 96) within
// timing.Most it returns ErrNoRundown, never an empty list: no holder
// would then be a guess. Stopped early (ESC, Ctrl+C) after event 96 but
// before the rundown went quiet, it returns what came, marked Incomplete.
// timing.Most counts from when the session's lock is taken (or, held by
// another for LockWait, given up): the wait for another tickscope's
// session to end (up to LockWait) is not the rundown's.
func ReadRundown(ctx context.Context, t Tracer, self uint32, timing RundownTiming) (*Windows, error) {
	release, busy, err := lock(ctx, t)
	if err != nil {
		return nil, err
	}
	if release != nil {
		defer release()
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timing.Most)
	defer cancel()
	events := make(chan Event, 64)
	done := make(chan error, 1)
	go func() { done <- runSession(ctx, t, busy, nil, func(ev Event) { events <- ev }) }()
	w := &Windows{Holders: []Holder{}}
	byPID := map[uint32]int{}
	quiet := time.NewTimer(timing.Most)
	defer quiet.Stop()
	wentQuiet := false
	take := func(ev Event) {
		switch ev.ID {
		case EventTimeResolutionRequestRundown:
			h := Holder{PID: ev.PID, Image: ev.AppName, Period100ns: ev.Period100ns, Self: ev.PID == self}
			if i, seen := byPID[ev.PID]; seen {
				w.Holders[i] = h
			} else {
				byPID[ev.PID] = len(w.Holders)
				w.Holders = append(w.Holders, h)
			}
		case EventTimeResolutionRundown:
			w.Timer = &TimerRundown{Current100ns: ev.Period100ns, Finest100ns: ev.Finest100ns, Coarsest100ns: ev.Coarsest100ns,
				KernelRequests: ev.KernelRequests, KernelRequested100ns: ev.KernelRequested100ns}
		default:
			return
		}
		if w.Timer != nil {
			quiet.Reset(timing.Quiet)
		}
	}
	for {
		select {
		case ev := <-events:
			take(ev)
		case <-quiet.C:
			wentQuiet = true
			cancel()
		case err := <-done:
			for len(events) > 0 {
				take(<-events)
			}
			if err != nil {
				return nil, err
			}
			switch {
			case w.Timer == nil && parent.Err() != nil:
				return nil, fmt.Errorf("%w: stopped before it came", ErrNoRundown)
			case w.Timer == nil:
				return nil, fmt.Errorf("%w in %s (no timer rundown, event %d)", ErrNoRundown, timing.Most, EventTimeResolutionRundown)
			}
			// Ended early (ESC, Ctrl+C) before the rundown went quiet: it
			// is what came so far.
			w.Incomplete = !wentQuiet
			sortHolders(w.Holders)
			return w, nil
		}
	}
}
