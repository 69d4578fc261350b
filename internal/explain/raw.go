package explain

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/tickscope/tickscope/internal/attribution"
	"github.com/tickscope/tickscope/internal/etwkernel"
	"github.com/tickscope/tickscope/internal/printable"
	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/report"
)

// raw is the result as its --raw file carries it (rawfile.Explain): what
// analyze needs to print this report again, byte for byte, less the
// aggregate, which is the late waits' causes summed. Every string is
// stored as printable.Line writes it, so that a name that does not print
// (a comm is any bytes) reads back as it was.
func (r *Result) raw(worst int) *rawfile.Explain {
	e := &rawfile.Explain{
		Worst: worst, Layer: r.Layer, LayerWhy: printable.Line(r.LayerWhy), SlackNs: r.SlackNs, Waits: r.Waits,
		LatenessP50Ns: r.LatenessP50Ns, LatenessP99Ns: r.LatenessP99Ns,
		ThresholdNs: r.ThresholdNs, ThresholdFrom: printable.Line(r.ThresholdFrom),
		Late: each(r.Late, func(l LateWait) rawfile.ExplainWait {
			return rawfile.ExplainWait{
				Index: l.Index, LatenessNs: l.LatenessNs, ArmedLate: l.ArmedLate, NotAttributed: l.NotAttributed,
				Reasons: each(l.Reasons, printable.Line), TimerCPU: l.TimerCPU, RunCPU: l.RunCPU, Blocking: printable.Line(l.Blocking),
				Causes: each(l.Causes, func(c Cause) rawfile.ExplainCause {
					return rawfile.ExplainCause{Cause: printable.Line(c.Cause), Name: printable.Line(c.Name), Context: printable.Line(c.Context), Ns: c.Ns}
				}),
			}
		}),
		Notes: each(r.Notes, printable.Line),
	}
	if w := r.Window; w != nil {
		e.Window = &rawfile.ExplainWindow{
			Interrupts: each(w.Interrupts, rawCount), Softirqs: each(w.Softirqs, rawCount), StealNs: w.StealNs,
			Idle: each(w.Idle, func(s IdleCount) rawfile.ExplainIdle {
				return rawfile.ExplainIdle{State: printable.Line(s.State), LatencyUs: s.LatencyUs, Entries: s.Entries, TimeUs: s.TimeUs}
			}),
			Notes: each(w.Notes, printable.Line),
		}
	}
	if t := r.Trace; t != nil {
		e.Trace = &rawfile.ExplainTrace{Instance: printable.Line(t.Instance), Mounted: t.Mounted, LeftMounted: printable.Line(t.LeftMounted),
			RemovedLeftover: t.RemovedLeftover, Missing: each(t.Missing, printable.Line), Events: t.Events, Lost: t.Lost, Removed: t.Removed}
		if fl := t.Flight; fl != nil {
			e.Trace.Flight = &rawfile.ExplainFlight{PagesRead: fl.PagesRead, PagesKept: fl.PagesKept, PeakPages: fl.PeakPages, PageBytes: fl.PageBytes, NotCovered: fl.NotCovered}
		}
	}
	if o := r.ObserverEffect; o != nil {
		e.ObserverEffect = &rawfile.ExplainObserver{ChunkWaits: o.ChunkWaits, OffWaits: o.OffWaits, Traced: o.Traced, Untraced: o.Untraced,
			TracedP50Ns: o.TracedP50Ns, TracedP99Ns: o.TracedP99Ns, UntracedP50Ns: o.UntracedP50Ns, UntracedP99Ns: o.UntracedP99Ns,
			P50Diff: o.P50Diff, P99Diff: o.P99Diff, Changed: o.Changed}
	}
	return e
}

func rawCount(c Count) rawfile.ExplainCount {
	return rawfile.ExplainCount{Name: printable.Line(c.Name), Desc: printable.Line(c.Desc), Count: c.Count}
}

// FromFile is the result an explain run wrote to f (its explain
// section) with the --worst it was given: what that run printed, its
// aggregate summed again from the late waits. A string not as
// printable.Line writes it is an error: no explain run wrote it.
func FromFile(f *rawfile.File) (*Result, int, error) {
	e := f.Explain
	if e == nil || len(f.Points) != 1 {
		return nil, 0, errors.New("not a file explain wrote: no explain section")
	}
	var u unescaper
	res := &Result{
		Layer: e.Layer, LayerWhy: u.s(e.LayerWhy), Method: f.Method, DelayNs: f.DelayNs, SlackNs: e.SlackNs,
		Waits: e.Waits, Stopped: f.Points[0].Stopped, Load: report.LoadOf(f), LatenessP50Ns: e.LatenessP50Ns, LatenessP99Ns: e.LatenessP99Ns,
		ThresholdNs: e.ThresholdNs, ThresholdFrom: u.s(e.ThresholdFrom),
		Notes: each(e.Notes, u.s),
	}
	if w := e.Window; w != nil {
		res.Window = &Window{
			Interrupts: each(w.Interrupts, u.count), Softirqs: each(w.Softirqs, u.count), StealNs: w.StealNs,
			Idle: each(w.Idle, func(s rawfile.ExplainIdle) IdleCount {
				return IdleCount{State: u.s(s.State), LatencyUs: s.LatencyUs, Entries: s.Entries, TimeUs: s.TimeUs}
			}),
			Notes: each(w.Notes, u.s),
		}
	}
	as := make([]attribution.Attribution, 0, len(e.Late))
	res.Late = each(e.Late, func(w rawfile.ExplainWait) LateWait {
		a := attribution.Attribution{LatenessNS: w.LatenessNs, ArmedLate: w.ArmedLate, NotAttributed: w.NotAttributed,
			Reasons: each(w.Reasons, u.s), TimerCPU: w.TimerCPU, RunCPU: w.RunCPU, Blocking: u.s(w.Blocking),
			Causes: each(w.Causes, func(c rawfile.ExplainCause) attribution.Cause {
				return attribution.Cause{Kind: attribution.Kind(u.s(c.Cause)), Name: u.s(c.Name), Context: u.s(c.Context), NS: c.Ns}
			})}
		as = append(as, a)
		l := lateWait(w.Index, waitRec{}, a)
		l.Reasons = a.Reasons // as written: lateWait makes a nil list empty
		if a.Causes == nil {
			l.Causes = nil
		}
		return l
	})
	for _, a := range as {
		for _, c := range a.Causes {
			if !fileKinds[c.Kind] && u.err == nil {
				u.err = fmt.Errorf("explain: %s is no cause explain names", strconv.Quote(string(c.Kind)))
			}
		}
	}
	res.Aggregate = aggregate(attribution.Sum(as))
	if t := e.Trace; t != nil {
		res.Trace = &TraceInfo{Instance: u.s(t.Instance), Mounted: t.Mounted, LeftMounted: u.s(t.LeftMounted),
			RemovedLeftover: t.RemovedLeftover, Missing: each(t.Missing, u.s), Events: t.Events, Lost: t.Lost, Removed: t.Removed}
		if fl := t.Flight; fl != nil {
			res.Trace.Flight = &FlightRecorder{PagesRead: fl.PagesRead, PagesKept: fl.PagesKept, PeakPages: fl.PeakPages, PageBytes: fl.PageBytes, NotCovered: fl.NotCovered}
		}
	}
	if o := e.ObserverEffect; o != nil {
		res.ObserverEffect = &ObserverEffect{ChunkWaits: o.ChunkWaits, OffWaits: o.OffWaits, Traced: o.Traced, Untraced: o.Untraced,
			TracedP50Ns: o.TracedP50Ns, TracedP99Ns: o.TracedP99Ns, UntracedP50Ns: o.UntracedP50Ns, UntracedP99Ns: o.UntracedP99Ns,
			P50Diff: o.P50Diff, P99Diff: o.P99Diff, Changed: o.Changed, Off: OffMeans}
	}
	if u.err != nil {
		return nil, 0, u.err
	}
	return res, e.Worst, nil
}

// each maps a list, keeping a nil one nil and an empty one empty: the
// JSON explain printed says null or [] and analyze must say the same.
func each[T, U any](in []T, fn func(T) U) []U {
	if in == nil {
		return nil
	}
	out := make([]U, 0, len(in))
	for _, v := range in {
		out = append(out, fn(v))
	}
	return out
}

// fileKinds are the causes an explain run can name: attribution's, and
// the ETW path's (etwKind of each etwkernel cause). A file naming another
// was not written by explain; were it read, its cause would count as
// explained.
var fileKinds = func() map[attribution.Kind]bool {
	kinds := map[attribution.Kind]bool{}
	for _, k := range attribution.Kinds {
		kinds[k] = true
	}
	for _, c := range etwkernel.Causes {
		kinds[etwKind(c)] = true
	}
	return kinds
}()

// unescaper reads strings back as printable.Line wrote them, keeping
// the first it cannot.
type unescaper struct{ err error }

func (u *unescaper) s(s string) string {
	out, ok := printable.Unline(s)
	if !ok && u.err == nil {
		u.err = fmt.Errorf("explain: %s is not a string as tickscope writes it", strconv.Quote(s))
	}
	return out
}

func (u *unescaper) count(c rawfile.ExplainCount) Count {
	return Count{Name: u.s(c.Name), Desc: u.s(c.Desc), Count: c.Count}
}
