package who

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// SessionName is the one ETW session who starts. A session outlives the
// process that started it, so a fixed name lets the next run stop the one
// a killed tickscope left behind.
const SessionName = "tickscope-who"

// Tracer is the ETW calls one session needs; package platform implements
// it with advapi32 (internal/platform/winapi), tests with a fake.
type Tracer interface {
	// Stop stops the session named name (ControlTraceW,
	// EVENT_TRACE_CONTROL_STOP), saying whether one ran.
	Stop(name string) (existed bool, err error)
	// Start starts a real-time session named name (StartTraceW).
	Start(name string) error
	// Consume opens the session for reading (OpenTraceW) and delivers its
	// records to each, on a goroutine of its own (ProcessTrace), until the
	// session stops; wait blocks until delivery has ended and closes the
	// handle (CloseTrace).
	Consume(name string, each func(Record)) (wait func() error, err error)
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

// Subscribe runs the session: it stops a leftover session of SessionName,
// starts its own, reads it, enables the provider and asks for its rundown,
// then calls each for every timer event decoded, until ctx ends. It stops
// the session on every path out (an error, ctx ending by ESC, Ctrl+C or
// the console closing, a panic in each), and waits for delivery to end.
// Records of other events, and timer events that do not decode, are
// skipped.
func Subscribe(ctx context.Context, t Tracer, each func(Event)) (err error) {
	if _, err := t.Stop(SessionName); err != nil {
		return fmt.Errorf("%w: %w", ErrLeftover, err)
	}
	if err := t.Start(SessionName); err != nil {
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
	wait, err := t.Consume(SessionName, func(r Record) {
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
	<-ctx.Done()
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

// ReadRundown runs a session just long enough to read the rundown, and
// returns the holders it named, finest first, with self (tickscope's
// process id) marked.
func ReadRundown(ctx context.Context, t Tracer, self uint32, timing RundownTiming) (*Windows, error) {
	ctx, cancel := context.WithTimeout(ctx, timing.Most)
	defer cancel()
	events := make(chan Event, 64)
	done := make(chan error, 1)
	go func() { done <- Subscribe(ctx, t, func(ev Event) { events <- ev }) }()
	w := &Windows{Holders: []Holder{}}
	byPID := map[uint32]int{}
	quiet := time.NewTimer(timing.Most)
	defer quiet.Stop()
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
			cancel()
		case err := <-done:
			for len(events) > 0 {
				take(<-events)
			}
			if err != nil {
				return nil, err
			}
			// Ended early (ESC, Ctrl+C), it is what came so far.
			sortHolders(w.Holders)
			return w, nil
		}
	}
}
