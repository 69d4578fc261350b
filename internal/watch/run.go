package watch

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/stats"
	"github.com/tickscope/tickscope/internal/timerstate"
	"github.com/tickscope/tickscope/internal/who"
)

// Defaults of watch's command line.
const (
	DefaultEvery        = time.Second
	DefaultMeasureEvery = 10 * time.Second
	// BurstWaits is how many waits a burst measures: enough for a p99, and
	// at Windows' 15.625 ms default tick about 3 s of the 10 s between
	// bursts (waits use no CPU).
	BurstWaits = 200
	// BurstDelay is each wait's requested delay, as status and apply check.
	BurstDelay = time.Millisecond
)

// Clock is the loop's time: the real one, or a test's.
type Clock interface {
	Now() time.Time
	// NewTicker ticks every d; stop ends it.
	NewTicker(d time.Duration) (tick <-chan time.Time, stop func())
}

// RealClock is the wall clock and time.Ticker.
type RealClock struct{}

// Now is time.Now.
func (RealClock) Now() time.Time { return time.Now() }

// NewTicker is a time.Ticker.
func (RealClock) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// Options is what a watch run does; Read, Measure and Clock are injected
// so that the loop runs in a test on a fake clock.
type Options struct {
	Every, MeasureEvery time.Duration
	Method              string
	Delay               time.Duration
	Waits               int
	// Read reads the state (timerstate.ReadState on the host).
	Read func() (timerstate.State, error)
	// Holder reads the startup holder at each burst (nil: not read).
	Holder func() *timerstate.Holder
	// Holders reads who holds the timer (nil: not read), at the start and
	// at each change of the period or the DMA latency in force: a scan of
	// /proc or an ETW rundown costs too much to run every second.
	Holders func() ([]who.Hold, error)
	// HoldersUnread is why Holders is nil where the OS could name holders
	// (Windows without elevation), said once, in the start event.
	HoldersUnread string
	// Measure takes a burst and returns each wait's lateness (ns); stopped
	// when ctx ended it.
	Measure func(ctx context.Context) (lateness []int64, err error)
	Clock   Clock
	// Log is --log (nil: none): every event is appended before Emit sees
	// it; a write that fails ends the run.
	Log *Log
	// Emit is given every event in order; an error ends the run.
	Emit func(Event) error
	// Start is the start event's settings.
	Start Start
}

// Flags is watch's command line.
type Flags struct {
	Every, MeasureEvery time.Duration
	Method              string
	Log, Listen         string
	JSON                bool
}

// Bounds of --every and --measure-every: a state read costs about 1 ms of
// CPU (BENCHMARKS.md), a burst of 1 ms waits about 0.2 s of wall time.
const (
	MinEvery, MaxEvery               = 100 * time.Millisecond, time.Hour
	MinMeasureEvery, MaxMeasureEvery = time.Second, 24 * time.Hour
)

// System is what watch reads of the OS besides the timer (seam.System,
// which package platform implements and package sim fakes, has it all):
// whether tickscope runs elevated, the startup holder, its programs, and
// who holds the timer. watch only reads through it, though the startup
// roles it takes could also install and remove.
type System interface {
	seam.User
	seam.HolderProbe
	seam.Autostart
	seam.Programs
	seam.HolderTracer
}

// ForHost checks the command line and fills in Read, Holder and Measure
// for a host and system (sys may be nil), with the host's default method
// unless one is given. Every refusal is a usage error. It opens nothing
// and leaves --log to the caller, which checks it (outfile.CheckLines),
// binds --listen, then opens it (outfile.OpenLines, NewLog), so that bad
// input binds no port and touches no file.
func ForHost(host seam.Host, sys System, f Flags, version string) (Options, error) {
	if f.Every < MinEvery || f.Every > MaxEvery {
		return Options{}, options.BadFlag("every", f.Every, "allowed %v..%v", MinEvery, MaxEvery)
	}
	if f.MeasureEvery < MinMeasureEvery || f.MeasureEvery > MaxMeasureEvery {
		return Options{}, options.BadFlag("measure-every", f.MeasureEvery, "allowed %v..%v", MinMeasureEvery, MaxMeasureEvery)
	}
	method := f.Method
	if method == "" {
		method = host.Methods()[0].Name
	}
	if _, err := seam.FindMethod(host, method); err != nil {
		return Options{}, options.BadFlag("method", method, "the methods here are %s", seam.MethodNames(host.Methods()))
	}
	o := Options{Every: f.Every, MeasureEvery: f.MeasureEvery, Method: method, Delay: BurstDelay, Waits: BurstWaits,
		Read: func() (timerstate.State, error) { return timerstate.ReadState(host) }, Clock: RealClock{}}
	o.Start = Start{Version: version, EveryNs: int64(f.Every), MeasureEveryNs: int64(f.MeasureEvery), Method: method, DelayNs: int64(o.Delay), Waits: o.Waits}
	if sys != nil {
		var windows bool
		if q, err := host.Query(); err == nil {
			windows = q.Windows != nil
		}
		o.Holder = holderReader(sys)
		// Windows names holders only elevated (an ETW session, as who):
		// without, the reason is said once rather than an ETW error at the
		// start and at every period change.
		if windows && !sys.Elevated() {
			o.HoldersUnread = who.NeedsElevation
		} else {
			o.Holders = func() ([]who.Hold, error) { return ReadHolders(sys) }
		}
	}
	spec := sample.Spec{Method: method, Delay: o.Delay, Samples: o.Waits, Warmup: 3}
	o.Measure = func(ctx context.Context) ([]int64, error) {
		point, err := sample.Measure(ctx, host, spec, nil)
		if err != nil {
			return nil, err
		}
		// A sample is delay + lateness, for either schedule; those taken
		// while the process was not running (a stop, a suspend of the
		// machine) are not the timer's lateness and are left out.
		lateness := point.Running()
		for i := range lateness {
			lateness[i] -= int64(spec.Delay)
		}
		return lateness, nil
	}
	return o, nil
}

// Run watches until ctx ends: it reads the state at once and every Every,
// emitting a change event when it differs from the read before, and
// measures a burst at once and every MeasureEvery (one at a time, beside
// the reads), emitting each. It ends with the summary event and returns
// the summary.
func Run(ctx context.Context, o Options) (*Summary, error) {
	clock := o.Clock
	if clock == nil {
		clock = RealClock{}
	}
	start := clock.Now()
	rec := newRecorder(start, o.Method, o.Delay)
	emit := func(e Event) error {
		if e.Time.IsZero() {
			e.Time = clock.Now()
		}
		if err := o.Log.Write(e); err != nil {
			return fmt.Errorf("writing the log: %w", err)
		}
		if o.Emit == nil {
			return nil
		}
		return o.Emit(e)
	}
	var holder *timerstate.Holder
	if o.Holder != nil {
		holder = o.Holder()
	}
	// The first read that succeeds is the start event, also when reads
	// failed before it.
	started := false
	read := func() error {
		t := clock.Now()
		s, err := o.Read()
		if err != nil {
			rec.sum.ReadErrors++
			return emit(Event{Time: t, Event: EventError, Error: "reading the timer state: " + err.Error()})
		}
		s.Holder = holder
		changes := rec.observe(t, s)
		first := !started
		started = true
		var e Event
		switch {
		case first:
			st := o.Start
			e = Event{Time: t, Event: EventStart, Start: &st, State: &s, HoldersError: o.HoldersUnread}
		case len(changes) > 0:
			e = Event{Time: t, Event: EventChange, State: &s, Changes: changes}
		default:
			return nil
		}
		if o.Holders != nil && (first || holdersMayDiffer(changes)) {
			if holders, err := o.Holders(); err != nil {
				e.HoldersError = err.Error()
			} else {
				e.Holders = &holders
			}
		}
		return emit(e)
	}
	if err := read(); err != nil {
		return nil, err
	}

	bursts := make(chan Event, 1)
	burstCtx, cancelBursts := context.WithCancel(ctx)
	defer cancelBursts()
	running := false
	startBurst := func() {
		if running {
			return
		}
		running = true
		go func() {
			lateness, err := o.Measure(burstCtx)
			if err != nil {
				bursts <- Event{Time: clock.Now(), Event: EventError, Error: fmt.Sprintf("measuring %s: %v", o.Method, err)}
				return
			}
			bursts <- Event{Time: clock.Now(), Event: EventBurst, Burst: burstOf(o.Method, o.Delay, lateness)}
		}()
	}
	finishBurst := func(e Event) error {
		running = false
		if e.Burst != nil && len(e.Burst.Lateness) > 0 {
			rec.burst(e.Burst.Lateness)
		} else if e.Burst != nil {
			return nil // stopped before its first wait
		}
		return emit(e)
	}
	startBurst()

	reads, stopReads := clock.NewTicker(o.Every)
	defer stopReads()
	measures, stopMeasures := clock.NewTicker(o.MeasureEvery)
	defer stopMeasures()
	for {
		var err error
		select {
		case <-ctx.Done():
			cancelBursts()
			if running {
				err = finishBurst(<-bursts)
			}
			sum := rec.summary(clock.Now())
			if emitErr := emit(Event{Event: EventSummary, Summary: sum}); err == nil {
				err = emitErr
			}
			return sum, err
		case <-reads:
			err = read()
		case <-measures:
			if o.Holder != nil {
				holder = o.Holder()
			}
			startBurst()
		case e := <-bursts:
			err = finishBurst(e)
		}
		if err != nil {
			return nil, err
		}
	}
}

// holderReader reads whether the startup holder runs and, when it has
// started since the read before, what it holds (timerstate.StartupDefinition: on
// Windows a call to the Task Scheduler service, too much for every burst).
// A holder with --while holds only while one of its programs runs: its
// programs are looked for at each read, with a scanner kept while the
// same holder runs and closed once it stops. What is looked for is what
// this process sees (another user's processes may be hidden from it), not
// what the holder holds: the holder's own state is not read.
func holderReader(sys System) func() *timerstate.Holder {
	var last *timerstate.Holder
	var scanner seam.ProgramScanner
	var scanErr error
	return func() *timerstate.Holder {
		h := timerstate.ReadHolder(sys)
		switch {
		case !h.Running:
			// The holder stopped: its programs are no longer looked for.
			if scanner != nil {
				scanner.Close()
				scanner = nil
			}
		case last != nil && last.Running && last.PID == h.PID:
			h.Held, h.While = last.Held, last.While
		default:
			held, while := timerstate.StartupDefinition(sys)
			if !held.IsZero() {
				h.Held = &held
			}
			h.While = while
			if scanner != nil {
				scanner.Close()
				scanner = nil
			}
			if len(while) > 0 {
				var err error
				if scanner, err = sys.ScanPrograms(while); err != nil {
					scanner, scanErr = nil, err
				} else {
					scanErr = nil
				}
			}
		}
		if h.Running && len(h.While) > 0 {
			err := scanErr
			if scanner != nil {
				h.HoldingFor, err = timerstate.ScanRunning(scanner, h.While)
			}
			if err != nil {
				h.WhileError = fmt.Sprintf("looking for %s: %v", strings.Join(h.While, ", "), err)
			}
		}
		last = h
		return h
	}
}

// holdersMayDiffer says whether a change is one of the timer settings
// someone holds: the period, the DMA latency in force.
func holdersMayDiffer(changes []Change) bool {
	for _, c := range changes {
		if c.Field == "current_period" || c.Field == "cpu_dma_latency" {
			return true
		}
	}
	return false
}

// ReadHolders reads who holds the timer through sys (package who):
// the processes holding a timer period (Windows, elevated) or
// /dev/cpu_dma_latency open (Linux), within 15 s.
func ReadHolders(sys seam.HolderTracer) ([]who.Hold, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	snap, err := sys.Holders(ctx)
	if err != nil {
		return nil, err
	}
	holders := []who.Hold{}
	for _, h := range snap.Holds() {
		if h.What == who.WhatPeriod || h.What == who.WhatDMALatency {
			holders = append(holders, h)
		}
	}
	return holders, nil
}

// burstOf summarises a burst's lateness.
func burstOf(method string, delay time.Duration, lateness []int64) *Burst {
	b := &Burst{Method: method, DelayNs: int64(delay), Waits: len(lateness), Lateness: lateness}
	if len(lateness) > 0 {
		s := stats.Summarize(lateness)
		b.P50Ns, b.P99Ns, b.MaxNs = s.P50, s.P99, s.Max
	}
	return b
}
