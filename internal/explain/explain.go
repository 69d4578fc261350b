package explain

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/attribution"
	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/procstat"
	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/stats"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// Reporting is where a run reports as it goes.
type Reporting struct {
	// Progress is given the waits done of the total; Finished is called
	// once measuring has ended.
	Progress func(done, total int)
	Finished func()
	// TraceWaiting is called once if another run owns the tracefs
	// instance: the run waits for it (ctx stops the wait).
	TraceWaiting func()
}

// Chosen is the layer a run uses and why.
type Chosen struct {
	Layer Layer
	Why   string
}

// Choose picks the layer: the one asked for if this machine allows it
// (a LayerError if not), or with LayerAuto layer 1 when tracing can run
// and layer 0 otherwise, saying why.
func Choose(asked Layer, canTrace bool, whyNot string) (Chosen, error) {
	switch asked {
	case Layer0:
		return Chosen{Layer0, "asked for with --layer 0"}, nil
	case Layer1:
		if !canTrace {
			return Chosen{}, &LayerError{Layer: Layer1, Why: whyNot}
		}
		return Chosen{Layer1, "asked for with --layer 1"}, nil
	}
	if canTrace {
		return Chosen{Layer1, "root and tracefs: tracing with generic tracepoints"}, nil
	}
	return Chosen{Layer0, "no tracing (" + whyNot + "): schedstat and /proc counters only"}, nil
}

// Run measures o's waits on host (this machine's; q its query) and
// explains those later than the threshold, with sys's counters and
// traces. Ctrl+C (ctx) stops early with a result for the waits taken.
// The file is the samples as a measure file, with the result in its
// explain section (FromFile reads it back).
func Run(ctx context.Context, host seam.Host, q *timerinfo.Report, sys System, o Options, r Reporting) (*Result, *rawfile.File, error) {
	finished := func() {
		if r.Finished != nil {
			r.Finished()
			r.Finished = nil
		}
	}
	defer finished()
	if err := o.Check(); err != nil {
		return nil, nil, err
	}
	spec, err := sample.OneDelay(host, q.OS, o.Method, o.Delay, o.Samples)
	if err != nil {
		return nil, nil, err
	}
	spec.Setting = o.Setting
	canTrace, whyNot := sys.CanTrace()
	choose := Choose
	if c, ok := sys.(layerChooser); ok {
		choose = c.chooseLayer // Windows: layer 1 from ETW, no layer 0
		if o.FlightRecorder {
			return nil, nil, options.Usagef("--flight-recorder here: allowed only on Linux at layer 1, whose tracefs buffer it drains and drops; an ETW session (Windows, and --simulate's model of it) keeps at most %d events, with no flight recorder", MaxETWEvents)
		}
	}
	asked := o.Layer
	if o.FlightRecorder && asked == LayerAuto {
		asked = Layer1 // the flight recorder is a trace's
	}
	chosen, err := choose(asked, canTrace, whyNot)
	var le *LayerError
	if errors.As(err, &le) && asked != o.Layer {
		le.By = "--flight-recorder"
	}
	if err != nil {
		return nil, nil, err
	}
	// Layer 1 of tracefs interleaves untraced chunks (see Recorder); ETW's,
	// whose system chooses its own layers, cannot.
	_, ownLayers := sys.(layerChooser)
	if err := checkSamples(o.Samples, chosen.Layer == Layer1 && !ownLayers); err != nil {
		return nil, nil, err
	}
	if o.FlightRecorder && o.Layer == LayerAuto {
		chosen.Why = "asked for with --flight-recorder"
	}
	res := &Result{Layer: int(chosen.Layer), LayerWhy: chosen.Why, Method: spec.Method, DelayNs: int64(spec.Delay), Late: []LateWait{}, Notes: []string{}}
	if _, ok := host.(seam.Simulated); ok {
		res.Simulated = true
	}

	obs := &observer{sys: sys, next: -spec.Warmup, recording: true}
	var trace Trace
	if chosen.Layer == Layer1 {
		waiting := r.TraceWaiting
		if waiting == nil {
			waiting = func() {}
		}
		if trace, err = sys.StartTrace(ctx, waiting); err != nil {
			return nil, nil, fmt.Errorf("starting the trace: %w", err)
		}
		defer func() {
			if trace != nil {
				trace.Close()
			}
		}()
		if o.FlightRecorder {
			f, ok := trace.(Flighter)
			if !ok {
				return nil, nil, errors.New("this trace has no flight recorder")
			}
			if err := f.Flight(MaxExplained); err != nil {
				return nil, nil, fmt.Errorf("starting the flight recorder: %w", err)
			}
			obs.flight, obs.over = f, int64(o.Over)
		}
	}
	// The load runs from before the window's counters are read until
	// after, so that they count what it did.
	if err := o.Load.Start(); err != nil {
		return nil, nil, err
	}
	defer o.Load.Stop()
	before, errBefore := sys.Counters()
	if rec, ok := trace.(Recorder); ok {
		// The waits explained are o.Samples traced ones; untraced chunks
		// between them measure what tracing costs.
		if err := checkSamples(spec.Samples, true); err != nil {
			return nil, nil, err
		}
		plan := planInterleave(spec.Samples)
		obs.plan, obs.rec = &plan, rec
		spec.Samples = plan.total(spec.Samples)
	}
	obs.waits = make([]waitRec, 0, spec.Samples)
	spec.Observer = obs
	point, err := sample.Measure(ctx, host, spec, r.Progress)
	after, errAfter := sys.Counters()
	o.Load.Stop()
	finished()
	var evs []attribution.Event
	var gaps []attribution.Gap
	var wx waitExplainer
	if trace != nil {
		var terr error
		evs, gaps, terr = trace.Stop()
		cerr := trace.Close()
		info := trace.Info()
		wx, _ = trace.(waitExplainer)
		trace = nil
		res.Trace = &info
		if err == nil && terr != nil {
			err = fmt.Errorf("reading the trace: %w", terr)
		}
		if err == nil && cerr != nil {
			err = fmt.Errorf("removing the trace instance: %w", cerr)
		}
	}
	if err == nil && obs.recErr != nil {
		err = fmt.Errorf("turning the trace's recording on again: %w", obs.recErr)
	}
	if err != nil {
		return nil, nil, err
	}
	if len(point.Latencies) == 0 {
		return nil, nil, sample.ErrNothingMeasured
	}
	gaps = append(gaps, obs.gaps()...)
	res.Stopped = point.Stopped
	res.SlackNs = obs.slack
	if obs.schedErr != nil {
		res.Notes = append(res.Notes, "run-queue wait not read: "+obs.schedErr.Error())
	}
	if errBefore == nil && errAfter == nil {
		w := summarizeWindow(procstat.Delta(before, after))
		res.Window = &w
	} else {
		// Read before and after: the same failure twice is said once, and
		// two on one line (a note is one line).
		var why []string
		for _, err := range []error{errBefore, errAfter} {
			if err != nil && !slices.Contains(why, err.Error()) {
				why = append(why, err.Error())
			}
		}
		res.Notes = append(res.Notes, "the window's counters were not all read: "+strings.Join(why, "; "))
	}
	if res.Trace != nil && len(res.Trace.UntracedCPUs) > 0 {
		cpus := "CPUs"
		if len(res.Trace.UntracedCPUs) == 1 {
			cpus = "CPU"
		}
		res.Notes = append(res.Notes, fmt.Sprintf("%s %s not traced: this process could not run there as the trace began (its CPU affinity), and events there (an IRQ, a wake-up handled there) are not seen", cpus, timerinfo.FormatCPUList(res.Trace.UntracedCPUs)))
	}
	if res.Trace != nil && res.Trace.Lost > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("the kernel's trace buffers lost %d events: waits across a loss are not attributed", res.Trace.Lost))
	}
	if res.Trace != nil && obs.plan == nil {
		res.Notes = append(res.Notes, "the observer effect is not measured: this trace cannot turn its recording off between waits")
	}
	if obs.plan != nil {
		res.ObserverEffect = observerEffect(obs.waits, *obs.plan)
		if obs.offErr != nil {
			res.Notes = append(res.Notes, "the observer effect was not measured: turning the trace's recording off failed: "+obs.offErr.Error())
		}
	}
	if wx != nil {
		res.Notes = append(res.Notes, wx.resultNotes(spec.Method)...)
	}
	judgeWith(res, obs.tid, obs.waits, o, evs, gaps, wx)
	file := &rawfile.File{Command: "measure", Query: q, Method: spec.Method, DelayNs: int64(spec.Delay), Load: o.Load.Record(), Points: []rawfile.Point{*point}}
	res.Load = report.LoadOf(file)
	file.Explain = res.raw(o.Worst)
	return res, file, nil
}

// waitRec is one wait as the observer saw it, on the host's clock.
type waitRec struct {
	Deadline, Start, End int64
	Before, After        procstat.SchedStat
	SchedOK              bool
	// Untraced: the trace's recording was off during the wait (an
	// observer-effect chunk): it is measured, not explained.
	Untraced bool
}

// interleave is how a traced run measures tracing's cost: after each
// chunk of Traced waits, Off waits with the recording off, so that both
// see the same load, side by side.
type interleave struct {
	Traced, Off int
}

// planInterleave gives the chunks for a run of samples traced waits:
// chunks of a tenth of the run (10 to 100 waits), each followed by half
// as many untraced, so that the run takes half as long again.
func planInterleave(samples int) interleave {
	c := min(100, max(10, samples/10))
	return interleave{Traced: c, Off: c / 2}
}

// traced reports whether the sample at index i (negative: warm-up) is a
// traced one.
func (p interleave) traced(i int) bool {
	return i < 0 || i%(p.Traced+p.Off) < p.Traced
}

// total is the samples the run takes for samples traced ones: it ends
// with a traced chunk's last wait, or its untraced chunk when full.
func (p interleave) total(samples int) int {
	k, r := samples/p.Traced, samples%p.Traced
	n := k * (p.Traced + p.Off)
	if r > 0 {
		n += r
	}
	return n
}

func (w waitRec) lateness() int64 { return w.End - w.Deadline }

// observer reads the measuring thread's schedstat around each wait,
// and with a plan turns the trace's recording off and on between chunks.
type observer struct {
	sys      System
	th       Thread
	tid      int
	slack    int64
	before   procstat.SchedStat
	beforeOK bool
	schedErr error
	waits    []waitRec

	// next is the index of the next wait (negative in the warm-up).
	next int
	// plan and rec, when tracing: the chunks and the trace; recording
	// is its state. offErr ends the interleaving (turning it off
	// failed); recErr is turning it on again that failed.
	plan           *interleave
	rec            Recorder
	recording      bool
	offErr, recErr error
	// flight, with the flight recorder, is told of each wait as it ends,
	// late when a traced one is later than over.
	flight Flighter
	over   int64
}

func (o *observer) Begin(slack int64) error {
	th, err := o.sys.Thread()
	if err != nil {
		return err
	}
	o.th, o.tid, o.slack = th, th.TID(), slack
	if _, err := th.SchedStat(); err != nil {
		o.schedErr = err
		o.th = nil
	}
	return nil
}

func (o *observer) BeforeWait() {
	if o.plan != nil && o.recErr == nil {
		if want := o.plan.traced(o.next) || o.offErr != nil; want != o.recording {
			if err := o.rec.Record(want); err != nil {
				if want {
					o.recErr = err
				} else {
					o.offErr = err
				}
			} else {
				o.recording = want
			}
		}
	}
	o.beforeOK = false
	if o.th != nil {
		var err error
		o.before, err = o.th.SchedStat()
		o.beforeOK = err == nil
	}
}

func (o *observer) AfterWait(i int, deadline, start, end int64) {
	o.next = i + 1
	if o.flight != nil {
		o.flight.Waited(i, start, end, end-deadline, i >= 0 && o.recording && end-deadline > o.over)
	}
	if i < 0 {
		return
	}
	w := waitRec{Deadline: deadline, Start: start, End: end, Before: o.before, Untraced: !o.recording}
	if o.th != nil && o.beforeOK {
		var err error
		w.After, err = o.th.SchedStat()
		w.SchedOK = err == nil
	}
	o.waits = append(o.waits, w)
}

// gaps are the stretches the recording was off, on every CPU: from just
// after the last traced wait before to the start of the first after.
func (o *observer) gaps() []attribution.Gap {
	var out []attribution.Gap
	for i, w := range o.waits {
		if !w.Untraced || i > 0 && o.waits[i-1].Untraced {
			continue
		}
		g := attribution.Gap{CPU: attribution.AllCPUs, From: w.Start}
		if i > 0 {
			g.From = o.waits[i-1].End + 1
		}
		j := i
		for j < len(o.waits) && o.waits[j].Untraced {
			j++
		}
		if j < len(o.waits) {
			g.To = o.waits[j].Start
		} else {
			g.To = o.waits[j-1].End
		}
		out = append(out, g)
	}
	return out
}

// Threshold is the lateness a wait must exceed to be explained: over
// when given, else the p99 of the waits' lateness.
func Threshold(lateness []int64, over time.Duration) (ns int64, from string) {
	if over > 0 {
		return int64(over), "--over"
	}
	sorted := slices.Clone(lateness)
	slices.Sort(sorted)
	return stats.Percentile(sorted, 99), "p99"
}

// judge fills res from the waits: the threshold, each late wait's
// attribution, worst first, and their aggregate.
// Only the traced waits are judged: the untraced ones measure the
// observer effect.
func judge(res *Result, tid int, waits []waitRec, o Options, evs []attribution.Event, gaps []attribution.Gap) {
	judgeWith(res, tid, waits, o, evs, gaps, nil)
}

// judgeWith is judge with a trace that attributes waits itself (wx, nil
// on Linux).
func judgeWith(res *Result, tid int, waits []waitRec, o Options, evs []attribution.Event, gaps []attribution.Gap, wx waitExplainer) {
	late := make([]int64, len(waits))
	var traced []int64
	for i, w := range waits {
		late[i] = w.lateness()
		if !w.Untraced {
			traced = append(traced, late[i])
		}
	}
	res.Waits = len(traced)
	sorted := slices.Clone(traced)
	slices.Sort(sorted)
	res.LatenessP50Ns, res.LatenessP99Ns = stats.Percentile(sorted, 50), stats.Percentile(sorted, 99)
	res.ThresholdNs, res.ThresholdFrom = Threshold(traced, o.Over)
	tl := attribution.NewTimeline(evs) // sorts evs, which timerStarts keeps the order of
	starts := timerStarts(evs, tid)
	type explained struct {
		i int
		w waitRec
		a attribution.Attribution
	}
	var ex []explained
	var c cuts
	var over int
	pick := func(int) bool { return true }
	if o.FlightRecorder {
		// The flight recorder kept the windows of the MaxExplained worst
		// by their measured lateness (the earliest of equals): those are
		// the ones explained, and cut before, not after, attribution.
		var idx []int
		for i, w := range waits {
			if !w.Untraced && late[i] > res.ThresholdNs {
				idx = append(idx, i)
			}
		}
		over = len(idx)
		slices.SortStableFunc(idx, func(p, q int) int { return cmp.Compare(late[q], late[p]) })
		keep := map[int]bool{}
		for _, i := range idx[:min(len(idx), MaxExplained)] {
			keep[i] = true
		}
		pick = func(i int) bool { return keep[i] }
	}
	for i, w := range waits {
		if w.Untraced || late[i] <= res.ThresholdNs || !pick(i) {
			continue
		}
		var a attribution.Attribution
		switch {
		case wx != nil:
			a = wx.explainWait(w, tid, res.Method)
		case res.Layer == int(Layer1):
			a = explainTraced(w, starts, tl, gaps)
		default:
			a = explainLayer0(w, res.SlackNs)
		}
		ex = append(ex, explained{i, w, a})
	}
	// The worst first, at most MaxExplained of them, each within the
	// bounds: what the file holds and analyze sums again, in this order.
	slices.SortStableFunc(ex, func(p, q explained) int { return cmp.Compare(q.a.LatenessNS, p.a.LatenessNS) })
	if !o.FlightRecorder {
		over = len(ex)
	}
	if over > MaxExplained {
		ex, c.late = ex[:min(len(ex), MaxExplained)], over-MaxExplained
	}
	notCovered := 0
	for _, e := range ex {
		if o.FlightRecorder && e.a.NotAttributed && lostIn(gaps, e.w) {
			notCovered++
		}
	}
	if o.FlightRecorder && res.Trace != nil && res.Trace.Flight != nil {
		res.Trace.Flight.NotCovered = notCovered
		if notCovered > 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("the flight recorder did not cover %d of the %d late waits explained: events were lost in their windows, and they are not attributed", notCovered, len(ex)))
		}
	}
	as := make([]attribution.Attribution, 0, len(ex))
	for _, e := range ex {
		a := c.bound(e.a)
		as = append(as, a)
		res.Late = append(res.Late, lateWait(e.i, e.w, a))
	}
	res.Notes = append(res.Notes, c.notes(over)...)
	res.Aggregate = aggregate(attribution.Sum(as))
}

// lostIn reports whether a CPU's gap (events lost, not the recording
// off) overlaps the wait.
func lostIn(gaps []attribution.Gap, w waitRec) bool {
	for _, g := range gaps {
		if g.CPU != attribution.AllCPUs && g.From <= w.End && g.To >= w.Start {
			return true
		}
	}
	return false
}

func explainLayer0(w waitRec, slack int64) attribution.Attribution {
	if !w.SchedOK {
		a := attribution.Layer0(attribution.Layer0Wait{Deadline: w.Deadline, Armed: w.Start, Woke: w.End, SlackNS: slack})
		if !a.ArmedLate && a.LatenessNS > 0 {
			// Without schedstat's reads, the run-queue wait is not known.
			a.Causes = []attribution.Cause{{Kind: attribution.KindUnexplained, NS: a.LatenessNS}}
			a.Reasons = append(a.Reasons, "schedstat was not read around this wait")
		}
		return a
	}
	return attribution.Layer0(attribution.Layer0Wait{Deadline: w.Deadline, Armed: w.Start, Woke: w.End, Before: w.Before, After: w.After, SlackNS: slack})
}

// timerStarts are the hrtimer_start events armed by the measuring
// thread tid, by time.
func timerStarts(evs []attribution.Event, tid int) []attribution.Event {
	var out []attribution.Event
	for _, e := range evs {
		if e.Kind == attribution.HrtimerStart && e.PID == tid {
			out = append(out, e)
		}
	}
	return out
}

// explainTraced finds the wait's own hrtimer_start (the last one armed by
// the measuring thread between the wait's start and end) and attributes
// the wait from the events; without one the wait is not attributed.
func explainTraced(w waitRec, starts []attribution.Event, tl attribution.Timeline, gaps []attribution.Gap) attribution.Attribution {
	st, ok := findStart(starts, w.Start, w.End)
	if !ok {
		return attribution.Attribution{
			Wait:       attribution.Wait{CPU: -1, Armed: w.Start, Expires: w.Deadline, SoftExpires: w.Deadline, Woke: w.End},
			LatenessNS: w.lateness(), TimerCPU: -1, RunCPU: -1, IdleState: attribution.IdleExit, NotAttributed: true,
			Causes:  []attribution.Cause{{Kind: attribution.KindNotAttributed, NS: w.lateness()}},
			Reasons: []string{"no hrtimer_start of the measuring thread in the wait: this method's timer is not one the trace follows"},
		}
	}
	return attribution.Explain(attribution.Wait{TID: st.PID, CPU: st.CPU, Hrtimer: st.Hrtimer, Armed: st.Time, Expires: st.Expires, SoftExpires: st.SoftExpires, Woke: w.End}, tl, gaps)
}

// findStart gives the last of the thread's hrtimer_starts in [from, to]:
// the timer of the wait that began at from and ended at to.
func findStart(starts []attribution.Event, from, to int64) (attribution.Event, bool) {
	hi := sort.Search(len(starts), func(i int) bool { return starts[i].Time > to })
	if hi > 0 && starts[hi-1].Time >= from {
		return starts[hi-1], true
	}
	return attribution.Event{}, false
}
