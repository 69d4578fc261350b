// Package seam holds the types of tickscope's one seam to the operating
// system, without the OS code: the Host a measurement runs on, its wait
// methods and waiters, the System the hold commands change, and the Shell
// (the desktop's browser and consent prompt) tickscope ui uses. Pure
// packages (sample, sweep, sim, report, hold) import this package, so
// that none of them pulls the registry, Task Scheduler or golang.org/x/sys into
// its dependencies. The implementations for each OS live in package
// platform; package sim has the simulated machine: the model of Windows
// timers, a Host, and an in-memory System and Shell.
package seam

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/timerinfo"
)

// Host is an operating system (or a model of one) as tickscope measures it.
//
// Apply, PrepareThread, NewWaiter and Waiter.Wait must be called on the
// goroutine that measures, locked to its OS thread: Linux timer slack is a
// property of a thread, and so is Windows thread priority.
type Host interface {
	// Query reports what the OS says about its timers. It changes nothing.
	Query() (*timerinfo.Report, error)
	// Methods lists the wait methods this host offers; the first is the
	// default.
	Methods() []Method
	// Now reads the high-resolution clock, in ns from an arbitrary origin.
	// Deadlines passed to Waiter.Wait are on this clock.
	Now() int64
	// PrepareThread raises the calling thread's scheduling priority as far
	// as the OS allows without elevation, and says what it is now. restore
	// puts back what was process-wide (Windows' priority class), so that a
	// process that lives on after measuring, such as a holder, is left as
	// it was.
	PrepareThread() (priority string, restore func())
	// Apply requests a timer setting and returns what the OS granted and how
	// to release it. The zero Setting requests nothing.
	Apply(s timerinfo.Setting) (granted timerinfo.Setting, release func() error, err error)
	// Observe reads the timer state a measurement records around itself.
	Observe() Observation
	// NewWaiter prepares the named wait method for waits of delay.
	NewWaiter(method string, delay time.Duration) (Waiter, error)
	// CPUTime is the CPU time this process has used so far.
	CPUTime() time.Duration
}

// Simulated is a Host that is a model of a machine, not this one
// (--simulate): what is measured on it is computed, not measured, and what
// a command changes on it must stay on the model. A command asks a host
// whether it is one, never which type it is.
type Simulated interface {
	Host
	// RealTime is the model kept in step with the wall clock, for a
	// command that holds a setting for as long as a person waits
	// (apply), and the in-memory System that keeps what that command
	// changes.
	RealTime() (Host, System)
}

// InterruptClock is a Host whose OS keeps an interrupt time that advances
// only at each clock interrupt (Windows), so that its steps show the
// interrupt period running now, whoever asked for it.
type InterruptClock interface {
	// PollInterruptTime reads the interrupt time (100 ns units) in a tight
	// loop for d: reads is how many readings were taken, values the first
	// and then each that differed from the one before; source names what
	// was read.
	PollInterruptTime(d time.Duration) (source string, reads int, values []uint64, err error)
}

// ThreadEnder is a Host whose OS ends a thread after the goroutine locked
// to it has exited, while the rest of the process goes on: a caller that
// lets a locked goroutine end (sample.Measure) waits for the thread to be
// gone before it returns, so that the process cannot exit while one of its
// threads is still ending. Under Wine such an exit can deadlock: ExitProcess
// makes wineserver stop the ending thread with SIGQUIT, and a thread stopped
// inside glibc's dlopen of libgcc_s (its first pthread_exit) leaves the
// dynamic loader's lock held, so the process hangs in exit until wineserver
// kills it with SIGKILL half a second later.
type ThreadEnder interface {
	// ThreadEnding is called on the locked thread that will end; the wait
	// it returns is called from another goroutine after that goroutine has
	// finished, and blocks until the OS has ended the thread (or a bound of
	// its own has passed: it never blocks for good).
	ThreadEnding() (wait func())
}

// StopWatcher is a Host that can tell when this process did not run at
// all: stopped by job control (SIGSTOP, Ctrl+Z) and continued, or with the
// whole machine suspended. A wait that spans such a time ends late, but
// not because of the timer: the measurement loop (package sample) marks
// the sample so that no judgement counts it as the timer's latency.
type StopWatcher interface {
	// WatchStops starts watching; it is called on the measuring thread
	// before its first wait, and the watch is closed after its last. A
	// nil watch says that this host cannot tell (a wrapper around a host
	// that cannot).
	WatchStops() (StopWatch, error)
}

// StopWatch is one watch of a StopWatcher.
type StopWatch interface {
	// Suspended is how long the machine has been suspended, in ns from an
	// origin of the watch's own, read as the call is made: it has grown
	// across a wait that spanned a suspend (Linux: CLOCK_BOOTTIME less
	// CLOCK_MONOTONIC; Windows: the interrupt time less the unbiased
	// interrupt time). It may move by a few µs between two reads (two
	// clocks read one after the other); 0 always where it cannot be told.
	Suspended() int64
	// Continued returns the times, on the host's clock (Host.Now), at
	// which the process was told it had been continued after a stop
	// (SIGCONT received) since the watch began, in order. Each is read
	// after the stop ended, by another thread than the measuring one, so
	// it may come some time after the measuring thread ran again.
	Continued() []int64
	// Close ends the watch.
	Close()
}

// ContinueAwaiter is a StopWatch that can wait for a continue: one seen
// after the measuring thread's last wait is told some time after it, and
// the measurement waits for it (package sample) rather than read the
// continues too soon.
type ContinueAwaiter interface {
	// AwaitContinue returns once a continue seen at or after since (on
	// the host's clock) has been told, or after timeout, whichever is
	// first.
	AwaitContinue(since int64, timeout time.Duration)
}

// ThreadClock is a Host that reads one thread's CPU time from another
// thread. A load's busy threads (package sample) are left out of the
// process's CPUTime with it, so that a measurement under load records the
// CPU its waits cost, not the load's.
type ThreadClock interface {
	// ThreadCPU is called on a goroutine locked to its OS thread. read
	// gives that thread's CPU time so far and may be called from any
	// goroutine until done; done is called on the same thread, before it
	// is unlocked (a thread back in Go's pool runs other goroutines).
	ThreadCPU() (read func() time.Duration, done func(), err error)
}

// Observation is the timer state at one moment.
type Observation struct {
	// Current100ns is the Windows timer period in force (0 elsewhere).
	Current100ns uint32
	// TimerSlackNs is the calling thread's timer slack (Linux; 0 elsewhere).
	TimerSlackNs int64
	// TimerThrottling is the outcome of the Windows 11 timer-resolution
	// throttling opt-out the process made before it held a period
	// (timerinfo.Conditions.TimerThrottling), "" before any was held.
	TimerThrottling string
}

// Schedule is how a method's waits relate to one another.
type Schedule int

const (
	// Relative waits each last the requested delay from the moment the wait
	// is called (Sleep, nanosleep): a sample is the wait's own duration.
	Relative Schedule = iota
	// Periodic waits end at absolute deadlines one delay apart (cyclictest's
	// clock_nanosleep loop): a sample is the delay plus the lateness past
	// its deadline, so no time between waits is lost or counted twice.
	Periodic
)

// Method describes a wait method.
type Method struct {
	Name    string
	Summary string
	// WholeMilliseconds is set for methods whose delay is an integer number
	// of milliseconds (Windows Sleep).
	WholeMilliseconds bool
	Schedule          Schedule
	// CatchesUp marks a periodic method whose own schedule can deliver a
	// tick right after a late one, so a wait can end before the loop's
	// deadline (time.Ticker, a timerfd with a pending expiration; timeSetEvent
	// does the same in measured series of 1 ms timers in C# on Windows 10).
	CatchesUp bool
}

// Waiter performs one kind of wait.
type Waiter interface {
	// Wait blocks for one wait. Periodic waiters wait until deadline (on the
	// host's clock); relative ones wait their delay and ignore deadline.
	Wait(deadline int64) error
	// Close releases what the waiter holds.
	Close() error
}

// MethodNames lists the host's methods, comma-separated.
func MethodNames(methods []Method) string {
	names := make([]string, len(methods))
	for i, m := range methods {
		names[i] = m.Name
	}
	return strings.Join(names, ", ")
}

// MethodList lists the host's methods one a line, with their summaries,
// for a command's help.
func MethodList(methods []Method) string {
	var b strings.Builder
	for _, m := range methods {
		fmt.Fprintf(&b, "  %-12s %s\n", m.Name, m.Summary)
	}
	return b.String()
}

// FindMethod returns the host's method with that name, or an error listing
// the valid names.
func FindMethod(h Host, name string) (Method, error) {
	var names []string
	for _, m := range h.Methods() {
		if m.Name == name {
			return m, nil
		}
		names = append(names, m.Name)
	}
	return Method{}, fmt.Errorf("unknown method %q: valid methods here are %s", name, strings.Join(names, ", "))
}

// ErrUnsupported is returned for what this OS cannot do.
var ErrUnsupported = errors.New("not supported on this OS")

// ErrNoProcess is a process id that names no process.
var ErrNoProcess = errors.New("no such process")

// OSError is a failed OS call: the call's name and the status it returned.
// Call names what the call was done to; an error of package os that names
// it again (a *fs.PathError whose path Call holds, a *os.LinkError whose
// two paths it holds) is given by its cause alone, so that no message says
// a path twice. Unwrap still gives the error itself.
type OSError struct {
	Call string
	Err  error
}

func (e *OSError) Error() string {
	err := e.Err
	switch named := err.(type) {
	case *fs.PathError:
		if named.Path != "" && strings.Contains(e.Call, named.Path) {
			err = named.Err
		}
	case *os.LinkError:
		if named.Old != "" && named.New != "" && strings.Contains(e.Call, named.Old) && strings.Contains(e.Call, named.New) {
			err = named.Err
		}
	}
	return e.Call + ": " + err.Error()
}
func (e *OSError) Unwrap() error { return e.Err }

// LockedError says that another tickscope holds an exclusive lock.
type LockedError struct {
	What string
	PID  int // 0 when it could not be read
}

func (e *LockedError) Error() string {
	if e.PID == 0 {
		return fmt.Sprintf("another tickscope %s is running", e.What)
	}
	return fmt.Sprintf("another tickscope %s is running (process %d)", e.What, e.PID)
}

// Names of the exclusive locks (System.Lock).
const (
	// BenchLock is held by whatever holds timer requests to measure them
	// (bench, verify-global): two would measure each other's requests.
	BenchLock = "bench"
	// HolderLock is the lock the startup holder takes while it holds, so
	// that status can tell whether it runs and startup remove can end it.
	HolderLock = "holder"
	// WhoLock is held for the life of who's ETW session (who.SessionName):
	// a session of that name whose lock another tickscope holds is live,
	// and is left alone.
	WhoLock = "who"
)
