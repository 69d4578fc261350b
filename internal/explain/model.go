package explain

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/tickscope/tickscope/internal/attribution"
	"github.com/tickscope/tickscope/internal/etwkernel"
	"github.com/tickscope/tickscope/internal/procstat"
)

// explain --simulate: Windows' layer 1 on the model of Windows timers.
// The trace's events come from one of two sources, behind System: a
// kernel ETW session (system_windows.go), or the model's kernel
// (KernelModel, sim.Kernel), which logs the model's waits as such a
// session would. Both give an etwTrace, and the waits are attributed,
// aggregated and rendered by the same code (etw.go, judgeWith, render.go)
// on every OS.

// KernelModel is the model's kernel session: what a kernel ETW session
// would have logged while the model's waits ran, decoded, on the model's
// clock (ns). sim.Kernel is one.
type KernelModel interface {
	// TID is the measuring thread's id.
	TID() int
	// Events are the DPC, ISR, CSwitch, ReadyThread and image events
	// logged so far.
	Events() []etwkernel.Event
	// ClockInterrupts are the clock interrupts' times so far, ascending:
	// the model knows them, a session does not (their event has no
	// documented layout).
	ClockInterrupts() []int64
	// PeriodNs is the tick period of the waits, 0 before the first.
	PeriodNs() int64
}

// ModelSystem is the System of explain --simulate: layer 1 from k, the
// kernel of the model's host (scenario names it), in place of an ETW
// session, and none of the OS's counters. Run on a simulated host only
// (a seam.Simulated: its result says simulated).
func ModelSystem(k KernelModel, scenario string) System {
	return &modelSystem{k: k, scenario: scenario}
}

type modelSystem struct {
	k        KernelModel
	scenario string
}

// NoModelLayer0 is why the model has no layer 0: it is Windows'.
const NoModelLayer0 = "the model of Windows timers is a Windows machine, which has no layer 0 (" + NoWindowsLayer0 + ")"

func (s *modelSystem) CanTrace() (bool, string) { return true, "" }

func (s *modelSystem) chooseLayer(asked Layer, _ bool, _ string) (Chosen, error) {
	if asked == Layer0 {
		return Chosen{}, &LayerError{Layer: Layer0, Why: NoModelLayer0}
	}
	return Chosen{Layer1, "simulated: the kernel events of the model of Windows timers (scenario " + s.scenario + "), as a kernel ETW session of its own would log them"}, nil
}

var (
	errModelCounters = errors.New("the model of Windows timers has no /proc or /sys counters: the notes give its ISR and DPC time by driver instead")
	errModelRunQueue = errors.New("the model of Windows timers keeps no per-thread run-queue time, as Windows does not: its ReadyThread and CSwitch events give the ready-to-run delay instead")
)

func (s *modelSystem) Counters() (procstat.Snapshot, error) {
	return procstat.Snapshot{}, errModelCounters
}

func (s *modelSystem) Thread() (Thread, error) { return modelThread(s.k.TID()), nil }

type modelThread int

func (t modelThread) TID() int { return int(t) }
func (modelThread) SchedStat() (procstat.SchedStat, error) {
	return procstat.SchedStat{}, errModelRunQueue
}

func (s *modelSystem) StartTrace(context.Context, func()) (Trace, error) {
	return &modelTrace{sys: s, info: TraceInfo{Instance: "simulated " + etwkernel.SessionName + " (model " + s.scenario + ")", Missing: []string{}}}, nil
}

// modelTrace is the model's kernel read as a session: its events, taken
// at Stop.
type modelTrace struct {
	*etwTrace // set by Stop
	sys       *modelSystem
	info      TraceInfo
}

func (t *modelTrace) Info() TraceInfo { return t.info }

func (t *modelTrace) Stop() ([]attribution.Event, []attribution.Gap, error) {
	if t.etwTrace != nil {
		return nil, nil, nil
	}
	evs := slices.Clone(t.sys.k.Events())
	var dropped int
	var droppedAt int64
	if len(evs) > MaxETWEvents {
		dropped, droppedAt = len(evs)-MaxETWEvents, evs[MaxETWEvents].Meta().At
		evs = evs[:MaxETWEvents]
	}
	seen := map[string]bool{}
	for _, ev := range evs {
		seen[eventClass(ev)] = true
	}
	x := newETWTrace(evs, time.Duration(t.sys.k.PeriodNs()))
	x.clock = t.sys.k.ClockInterrupts()
	x.dropped, x.droppedAt = dropped, droppedAt
	t.etwTrace = x
	t.info.Events = len(evs)
	for _, c := range []string{"DPC", "ISR", "CSwitch", "ReadyThread", "Image"} {
		if !seen[c] {
			t.info.Missing = append(t.info.Missing, c)
		}
	}
	return nil, nil, nil
}

func (t *modelTrace) Close() error {
	t.info.Removed = true
	return nil
}

// resultNotes are the ETW path's, and what the model is.
func (t *modelTrace) resultNotes(method string) []string {
	return append(t.etwTrace.resultNotes(method), "simulated: the events are the model's kernel's (internal/sim's Kernel), not a session's: clock interrupts on the model's ticks, the measuring thread's ready and switch in, drivers' ISR and DPC bursts and another thread's runs now and then after the tick, on one processor; the time from the switch in to the thread's next call has no event and is unexplained")
}
