package explain

import (
	"context"
	"strings"

	"github.com/tickscope/tickscope/internal/attribution"
	"github.com/tickscope/tickscope/internal/procstat"
)

// System is what explain reads and changes of the OS: one implementation
// per OS (NewSystem), and fakes in tests.
type System interface {
	// CanTrace says whether layer 1 can run here, and if not, why.
	CanTrace() (ok bool, why string)
	// StartTrace makes and starts the tracefs instance. While another run
	// owns it, StartTrace waits (calling waiting once) until it is free
	// or ctx ends.
	StartTrace(ctx context.Context, waiting func()) (Trace, error)
	// Counters reads the /proc and /sys counters of a window's ends.
	Counters() (procstat.Snapshot, error)
	// Thread reads the calling thread, which is locked to its OS thread.
	Thread() (Thread, error)
}

// Thread is the measuring thread.
type Thread interface {
	TID() int
	// SchedStat reads the thread's run and run-queue times.
	SchedStat() (procstat.SchedStat, error)
}

// Recorder is a Trace that can turn its recording off and on while its
// events stay enabled (Linux: the instance's tracing_on), which the
// observer effect's untraced chunks need. It is called on the measuring
// thread between waits: keep it to a write. A trace without it (ETW has
// no such cheap switch) measures no observer effect, and says so.
type Recorder interface {
	Record(on bool) error
}

// Flighter is a Trace that can be a flight recorder (Linux's tracefs):
// Flight, called before the first wait, makes it keep only the windows
// of at most maxWindows late waits, which Waited, called on the
// measuring thread as each wait ends (the warm-up's too, with a negative
// index), names. Waited must be cheap: it runs between waits.
type Flighter interface {
	Flight(maxWindows int) error
	Waited(index int, start, end, lateness int64, late bool)
}

// Trace is a running trace.
type Trace interface {
	// Info says what the instance is and did.
	Info() TraceInfo
	// Stop stops tracing and gives every event read, sorted, with the
	// gaps in which events were lost.
	Stop() ([]attribution.Event, []attribution.Gap, error)
	// Close removes the instance (and unmounts tracefs if StartTrace
	// mounted it).
	Close() error
}

// TraceInfo is what a trace says about itself.
type TraceInfo struct {
	// Instance is a tracefs instance's directory or an ETW session's
	// name (Kind says which).
	Instance string `json:"instance"`
	Mounted  bool   `json:"mounted"`
	// LeftMounted is where tracefs, which the run mounted, was left
	// mounted because it was in use when the run ended; "" when not.
	LeftMounted     string   `json:"left_mounted"`
	RemovedLeftover bool     `json:"removed_leftover"`
	Missing         []string `json:"missing_events"`
	// Events is how many were decoded; Lost how many the kernel's
	// buffers lost (overruns and drops over every CPU).
	Events int    `json:"events"`
	Lost   uint64 `json:"lost_events"`
	// Removed is true once Close removed the instance.
	Removed bool `json:"removed"`
	// Flight is what the flight recorder did (--flight-recorder); null
	// when the run kept the whole trace.
	Flight *FlightRecorder `json:"flight_recorder"`
	// UntracedCPUs are the online CPUs this process could not run on as
	// the trace began, which it did not trace (tracedCPUs); said in a
	// note.
	UntracedCPUs []int `json:"-"`
}

// Kind is what Instance names, for the text: "instance" for a tracefs
// instance's directory (a path), "ETW session" for a session's name.
func (t TraceInfo) Kind() string {
	if strings.Contains(t.Instance, "/") {
		return "instance"
	}
	return "ETW session"
}

// Supported is nil where explain can run, ErrUnsupported elsewhere.
func Supported() error { return supported() }
