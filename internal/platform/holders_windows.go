package platform

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/who"
	"github.com/tickscope/tickscope/internal/winapi"
)

// Holders reads the Kernel-Power rundown in an ETW session of its own
// (who.ReadRundown drives it; etwTracer makes the calls). It needs an
// elevated token: the caller checks Elevated first.
func (s system) Holders(ctx context.Context) (*who.Snapshot, error) {
	w, err := who.ReadRundown(ctx, &etwTracer{sys: s}, uint32(os.Getpid()), who.DefaultRundownTiming)
	if err != nil {
		return nil, err
	}
	return &who.Snapshot{Windows: w}, nil
}

// HolderEvents delivers the Kernel-Power timer events of a session of its
// own until ctx ends (who.Subscribe).
func (s system) HolderEvents(ctx context.Context, rundown <-chan struct{}, each func(who.Event)) error {
	return who.Subscribe(ctx, &etwTracer{sys: s}, rundown, each)
}

// kernelPower is who.KernelPowerProvider as a GUID.
var kernelPower = func() windows.GUID {
	g, err := windows.GUIDFromString(who.KernelPowerProvider)
	if err != nil {
		panic(err)
	}
	return g
}()

// etwTracer is who.Tracer on advapi32: one session at a time.
type etwTracer struct {
	sys     system
	session uint64 // StartTraceW's handle
}

var _ who.Tracer = (*etwTracer)(nil)

// etwError is a failed call that controls a session (ControlTraceW,
// StartTraceW); ERROR_ACCESS_DENIED, what a terminal that is not elevated
// gets from them, wraps who.ErrNeedsElevation. (OpenTraceW's is not:
// Wine's refuses a session even elevated.)
func etwError(call string, err error) error {
	if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		return fmt.Errorf("%w (%w)", who.ErrNeedsElevation, &seam.OSError{Call: call, Err: err})
	}
	return &seam.OSError{Call: call, Err: err}
}

// Lock takes the who lock, Global\tickscope-who (mutexName), which any
// user can create first and hold: who.Subscribe trusts it only while a
// session of who.SessionName runs (who.SessionName says why).
func (e *etwTracer) Lock() (func(), error) {
	release, err := e.sys.Lock(seam.WhoLock)
	if locked := (*seam.LockedError)(nil); errors.As(err, &locked) {
		return nil, fmt.Errorf("%w (%w)", who.ErrBusy, err)
	}
	return release, err
}

func (e *etwTracer) Stop(name string) (bool, error) {
	p, err := windows.UTF16PtrFromString(name)
	if err == nil {
		err = winapi.ControlTrace(0, p, winapi.NewTraceProperties(), winapi.EVENT_TRACE_CONTROL_STOP)
	}
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, windows.ERROR_WMI_INSTANCE_NOT_FOUND):
		return false, nil
	}
	return false, etwError("ControlTraceW("+name+", EVENT_TRACE_CONTROL_STOP)", err)
}

func (e *etwTracer) Start(name string) error {
	props := winapi.NewTraceProperties()
	// A real-time session logs to no file: LogFileNameOffset 0
	// ("EVENT_TRACE_PROPERTIES structure", Microsoft Learn).
	props.LogFileNameOffset = 0
	var handle uint64
	if err := winapi.StartTrace(&handle, name, props); err != nil {
		// ERROR_ALREADY_EXISTS: "A session with the same name or GUID is
		// already running" ("StartTraceW function (evntrace.h)", Microsoft
		// Learn). Only a process allowed to start sessions can have made
		// it, so this, not the lock, says whether another who runs
		// (who.SessionName).
		if errors.Is(err, windows.ERROR_ALREADY_EXISTS) {
			return who.SessionExists(etwError("StartTraceW("+name+")", err))
		}
		return etwError("StartTraceW("+name+")", err)
	}
	e.session = handle
	return nil
}

func (e *etwTracer) Enable() error {
	if err := winapi.EnableTraceEx2(e.session, &kernelPower, winapi.EVENT_CONTROL_CODE_ENABLE, winapi.TRACE_LEVEL_INFORMATION, who.KernelPowerKeyword, 0, 0, nil); err != nil {
		return &seam.OSError{Call: "EnableTraceEx2(Microsoft-Windows-Kernel-Power, EVENT_CONTROL_CODE_ENABLE_PROVIDER)", Err: err}
	}
	return nil
}

func (e *etwTracer) Rundown() error {
	if err := winapi.EnableTraceEx2(e.session, &kernelPower, winapi.EVENT_CONTROL_CODE_CAPTURE_STATE, winapi.TRACE_LEVEL_INFORMATION, who.KernelPowerKeyword, 0, 0, nil); err != nil {
		return &seam.OSError{Call: "EnableTraceEx2(Microsoft-Windows-Kernel-Power, EVENT_CONTROL_CODE_CAPTURE_STATE)", Err: err}
	}
	if err := winapi.ControlTrace(e.session, nil, winapi.NewTraceProperties(), winapi.EVENT_TRACE_CONTROL_FLUSH); err != nil {
		return &seam.OSError{Call: "ControlTraceW(EVENT_TRACE_CONTROL_FLUSH)", Err: err}
	}
	return nil
}

// The event callback: windows.NewCallback's slots are few and never
// freed, so there is one, which hands records to the consumer of the
// moment.
var (
	consumer struct {
		sync.Mutex
		each func(who.Record)
	}
	eventCallback = windows.NewCallback(func(rec *winapi.EventRecord) uintptr {
		if rec.EventHeader.ProviderID != kernelPower {
			return 0
		}
		consumer.Lock()
		each := consumer.each
		consumer.Unlock()
		if each == nil {
			return 0
		}
		h := rec.EventHeader
		// Without PROCESS_TRACE_MODE_RAW_TIMESTAMP the time stamp is a
		// FILETIME.
		ft := windows.Filetime{LowDateTime: uint32(h.TimeStamp), HighDateTime: uint32(uint64(h.TimeStamp) >> 32)}
		payload := []byte{}
		if rec.UserData != nil && rec.UserDataLength > 0 {
			payload = append(payload, unsafe.Slice((*byte)(rec.UserData), rec.UserDataLength)...)
		}
		each(who.Record{
			ID: h.EventDescriptor.ID, Version: h.EventDescriptor.Version, HeaderPID: h.ProcessID,
			Pointer64: h.Flags&winapi.EVENT_HEADER_FLAG_64_BIT_HEADER != 0,
			At:        time.Unix(0, ft.Nanoseconds()), Payload: payload,
		})
		return 0
	})
)

func (e *etwTracer) Consume(name string, each func(who.Record)) (<-chan struct{}, func() error, error) {
	consumer.Lock()
	if consumer.each != nil {
		consumer.Unlock()
		return nil, nil, errors.New("another Kernel-Power session is being read in this process")
	}
	consumer.each = each
	consumer.Unlock()
	release := func() {
		consumer.Lock()
		consumer.each = nil
		consumer.Unlock()
	}
	loggerName, err := windows.UTF16PtrFromString(name)
	if err != nil {
		release()
		return nil, nil, err
	}
	logfile := &winapi.EventTraceLogfile{
		LoggerName:          loggerName,
		ProcessTraceMode:    winapi.PROCESS_TRACE_MODE_REAL_TIME | winapi.PROCESS_TRACE_MODE_EVENT_RECORD,
		EventRecordCallback: eventCallback,
	}
	handle, err := winapi.OpenTrace(logfile)
	if err != nil {
		release()
		return nil, nil, &seam.OSError{Call: "OpenTraceW(" + name + ")", Err: err}
	}
	ended := make(chan struct{})
	var delivered error // ProcessTrace's result, set before ended closes
	go func() {
		defer close(ended)
		// The callback runs on this thread, which blocks in ProcessTrace
		// until the session stops.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := winapi.ProcessTrace([]uint64{handle}, nil, nil)
		runtime.KeepAlive(logfile)
		if err != nil && !errors.Is(err, windows.ERROR_CANCELLED) {
			delivered = &seam.OSError{Call: "ProcessTrace", Err: err}
		}
	}()
	return ended, func() error {
		defer release()
		// Stopping the session ends ProcessTrace; CloseTrace ends it too,
		// should the stop not reach it.
		select {
		case <-ended:
			winapi.CloseTrace(handle)
			return delivered
		case <-time.After(3 * time.Second):
		}
		winapi.CloseTrace(handle)
		select {
		case <-ended:
			return delivered
		case <-time.After(2 * time.Second):
			return &seam.OSError{Call: "ProcessTrace", Err: errors.New("still delivering 5 s after its session was stopped and its handle closed")}
		}
	}, nil
}
