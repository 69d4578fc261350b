package explain

import (
	"cmp"
	"slices"

	"github.com/tickscope/tickscope/internal/attribution"
	"github.com/tickscope/tickscope/internal/procstat"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/stats"
)

// Result is an explain run: its JSON is `explain --json`'s
// (docs/json.md).
type Result struct {
	// Simulated: the run was on the model of Windows timers
	// (--simulate), its trace the model's kernel events.
	Simulated bool `json:"simulated,omitempty"`
	// Layer is 0 or 1; LayerWhy says why that one.
	Layer    int    `json:"layer"`
	LayerWhy string `json:"layer_why"`
	Method   string `json:"method"`
	DelayNs  int64  `json:"delay_ns"`
	// SlackNs is the measuring thread's timer slack.
	SlackNs int64 `json:"slack_ns"`
	Waits   int   `json:"waits"`
	Stopped bool  `json:"stopped"`
	// Load is the busy threads the run kept going beside the waits
	// (--load); absent without.
	Load *report.Load `json:"load,omitempty"`
	// The lateness of every wait (its end less its deadline).
	LatenessP50Ns int64 `json:"lateness_p50_ns"`
	LatenessP99Ns int64 `json:"lateness_p99_ns"`
	// ThresholdNs: a wait later than it is late; ThresholdFrom is "p99"
	// (the run's own) or "--over".
	ThresholdNs   int64  `json:"threshold_ns"`
	ThresholdFrom string `json:"threshold_from"`
	// Late are the late waits, worst first.
	Late      []LateWait `json:"late"`
	Aggregate Aggregate  `json:"aggregate"`
	Window    *Window    `json:"window"`
	// Trace is layer 1's instance, null at layer 0.
	Trace *TraceInfo `json:"trace"`
	// ObserverEffect is tracing's cost, measured in the run (layer 1;
	// null at layer 0).
	ObserverEffect *ObserverEffect `json:"observer_effect"`
	Notes          []string        `json:"notes"`
}

// ObserverEffect is the same waits' lateness with the trace recording
// and without, measured side by side in interleaved chunks.
type ObserverEffect struct {
	// ChunkWaits traced waits alternate with OffWaits untraced ones.
	ChunkWaits int `json:"chunk_waits"`
	OffWaits   int `json:"off_waits"`
	// Traced and Untraced are the waits of each kind measured.
	Traced   int `json:"traced"`
	Untraced int `json:"untraced"`
	// The lateness of each kind, nearest-rank.
	TracedP50Ns   int64 `json:"traced_p50_ns"`
	TracedP99Ns   int64 `json:"traced_p99_ns"`
	UntracedP50Ns int64 `json:"untraced_p50_ns"`
	UntracedP99Ns int64 `json:"untraced_p99_ns"`
	// P50Diff is traced less untraced p50 with its 95 % interval;
	// P99Diff the same for the p99, distribution-free (unbounded with
	// fewer than about 440 waits of each kind).
	P50Diff stats.Interval `json:"p50_diff"`
	P99Diff stats.Interval `json:"p99_diff"`
	// Changed: tracing made the p50 or the p99 later beyond its
	// interval.
	Changed bool `json:"changed"`
	// Off says what untraced means here.
	Off string `json:"off"`
}

// OffMeans is what an untraced chunk is.
const OffMeans = "the instance's recording off (its tracing_on 0) with its events left enabled: what differs is recording the events and draining the buffer, not the tracepoints' own entry, which turning the events off and on per chunk would cost tens of ms of kernel text patching each time"

func observerEffect(waits []waitRec, p interleave) *ObserverEffect {
	var on, off []int64
	for _, w := range waits {
		if w.Untraced {
			off = append(off, w.lateness())
		} else {
			on = append(on, w.lateness())
		}
	}
	slices.Sort(on)
	slices.Sort(off)
	e := &ObserverEffect{ChunkWaits: p.Traced, OffWaits: p.Off, Traced: len(on), Untraced: len(off), Off: OffMeans}
	if len(on) == 0 || len(off) == 0 {
		return e
	}
	e.TracedP50Ns, e.TracedP99Ns = stats.Percentile(on, 50), stats.Percentile(on, 99)
	e.UntracedP50Ns, e.UntracedP99Ns = stats.Percentile(off, 50), stats.Percentile(off, 99)
	e.P50Diff = stats.MedianDiffCI(on, off)
	e.P99Diff = stats.PercentileDiffBounds(on, off, 99, 0.05)
	e.Changed = e.P50Diff.Lo > 0 && !e.P50Diff.Unbounded || e.P99Diff.Lo > 0 && !e.P99Diff.Unbounded
	return e
}

// LateWait is one late wait's attribution.
type LateWait struct {
	// Index is the wait's place among the samples (0 is the first).
	Index      int     `json:"index"`
	LatenessNs int64   `json:"lateness_ns"`
	Causes     []Cause `json:"causes"`
	ArmedLate  bool    `json:"armed_late"`
	// NotAttributed: events were lost, or no timer of the wait was traced.
	NotAttributed bool     `json:"not_attributed"`
	Reasons       []string `json:"reasons"`
	// TimerCPU and RunCPU (layer 1; -1 unknown), Blocking the blocking
	// thread as comm:pid.
	TimerCPU int    `json:"timer_cpu"`
	RunCPU   int    `json:"run_cpu"`
	Blocking string `json:"blocking"`
}

// Cause is one part of a wait's lateness: Name is who did it (a thread,
// an IRQ, a softirq), Context where or in what state it happened (an IRQ
// delay's CPU and what it ran, a remote wake-up's CPU).
type Cause struct {
	Cause   string  `json:"cause"`
	Name    string  `json:"name"`
	Context string  `json:"context"`
	Ns      int64   `json:"ns"`
	Share   float64 `json:"share"`
}

// Aggregate is the late waits' causes, worst first.
type Aggregate struct {
	// Late waits counted and their lateness: those armed late are apart.
	Late           int     `json:"late"`
	LatenessNs     int64   `json:"lateness_ns"`
	ExplainedNs    int64   `json:"explained_ns"`
	ExplainedShare float64 `json:"explained_share"`
	ArmedLate      int     `json:"armed_late"`
	ArmedLateNs    int64   `json:"armed_late_ns"`
	NotAttributed  int     `json:"not_attributed"`
	Causes         []Share `json:"causes"`
	// Names are every name over every cause, worst first: who, never
	// where (a context is in its cause's Contexts).
	Names []Name `json:"names"`
}

// Share is one cause's part.
type Share struct {
	Cause string  `json:"cause"`
	Ns    int64   `json:"ns"`
	Share float64 `json:"share"`
	Waits int     `json:"waits"`
	Names []Name  `json:"names"`
	// Contexts are where it happened, worst first.
	Contexts []Context `json:"contexts"`
}

// Context is where, or in what state, and how much.
type Context struct {
	Context string  `json:"context"`
	Ns      int64   `json:"ns"`
	Share   float64 `json:"share"`
	Waits   int     `json:"waits"`
}

// Name is who, and how much.
type Name struct {
	Name  string  `json:"name"`
	Ns    int64   `json:"ns"`
	Share float64 `json:"share"`
}

// Window is what the /proc and /sys counters did over the run; nil when
// they were not read at both ends (the notes say why).
type Window struct {
	Interrupts []Count `json:"interrupts"`
	Softirqs   []Count `json:"softirqs"`
	// StealNs is the steal of every CPU, from /proc/stat.
	StealNs int64       `json:"steal_ns"`
	Idle    []IdleCount `json:"idle"`
	Notes   []string    `json:"notes"`
}

// Count is one row's count over the window, over every CPU.
type Count struct {
	Name  string `json:"name"`
	Desc  string `json:"desc"`
	Count uint64 `json:"count"`
}

// IdleCount is one idle state's entries over every CPU.
type IdleCount struct {
	State     string `json:"state"`
	LatencyUs uint64 `json:"latency_us"`
	Entries   uint64 `json:"entries"`
	TimeUs    uint64 `json:"time_us"`
}

func lateWait(i int, w waitRec, a attribution.Attribution) LateWait {
	l := LateWait{Index: i, LatenessNs: a.LatenessNS, ArmedLate: a.ArmedLate, NotAttributed: a.NotAttributed, Reasons: a.Reasons, TimerCPU: a.TimerCPU, RunCPU: a.RunCPU, Blocking: a.Blocking, Causes: []Cause{}}
	if l.Reasons == nil {
		l.Reasons = []string{}
	}
	for _, c := range a.Causes {
		var share float64
		if a.LatenessNS > 0 {
			share = float64(c.NS) / float64(a.LatenessNS)
		}
		l.Causes = append(l.Causes, Cause{Cause: string(c.Kind), Name: c.Name, Context: c.Context, Ns: c.NS, Share: share})
	}
	return l
}

func aggregate(g attribution.Aggregate) Aggregate {
	out := Aggregate{Late: g.Late, LatenessNs: g.LatenessNS, ArmedLate: g.ArmedLate, ArmedLateNs: g.ArmedLateNS, NotAttributed: g.NotAttributed, Causes: []Share{}, Names: []Name{}}
	names := map[string]int64{}
	for _, s := range g.Causes {
		sh := Share{Cause: string(s.Kind), Ns: s.NS, Share: s.Share, Waits: s.Waits, Names: []Name{}, Contexts: []Context{}}
		for _, n := range s.Names {
			sh.Names = append(sh.Names, Name{Name: n.Name, Ns: n.NS, Share: n.Share})
			names[n.Name] += n.NS
		}
		for _, c := range s.Contexts {
			sh.Contexts = append(sh.Contexts, Context{Context: c.Context, Ns: c.NS, Share: c.Share, Waits: c.Waits})
		}
		if s.Kind != attribution.KindUnexplained && s.Kind != attribution.KindNotAttributed {
			out.ExplainedNs += s.NS
		}
		out.Causes = append(out.Causes, sh)
	}
	for n, ns := range names {
		out.Names = append(out.Names, Name{Name: n, Ns: ns, Share: ratio(ns, g.LatenessNS)})
	}
	slices.SortFunc(out.Names, func(p, q Name) int {
		if c := cmp.Compare(q.Ns, p.Ns); c != 0 {
			return c
		}
		return cmp.Compare(p.Name, q.Name)
	})
	out.ExplainedShare = ratio(out.ExplainedNs, g.LatenessNS)
	return out
}

func ratio(n, d int64) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

// summarizeWindow sums each row over the CPUs, keeps the rows that moved,
// most first, and says what the counters cannot show.
func summarizeWindow(w procstat.Window) Window {
	out := Window{Interrupts: counts(w.Interrupts), Softirqs: counts(w.Softirqs), Idle: []IdleCount{}, Notes: attribution.WindowNotes(w)}
	for _, s := range w.Steal {
		if s.Known {
			out.StealNs += s.NS
		}
	}
	idle := map[string]*IdleCount{}
	var order []string
	for _, d := range w.Idle {
		if d.Reset {
			continue
		}
		c := idle[d.Name]
		if c == nil {
			c = &IdleCount{State: d.Name, LatencyUs: d.LatencyUS}
			idle[d.Name] = c
			order = append(order, d.Name)
		}
		c.Entries += d.Usage
		c.TimeUs += d.TimeUS
	}
	for _, n := range order {
		out.Idle = append(out.Idle, *idle[n])
	}
	if out.Notes == nil {
		out.Notes = []string{}
	}
	return out
}

func counts(d procstat.TableDelta) []Count {
	out := []Count{}
	for _, r := range d.Rows {
		if r.Total > 0 {
			out = append(out, Count{Name: r.Name, Desc: r.Desc, Count: r.Total})
		}
	}
	slices.SortStableFunc(out, func(p, q Count) int { return cmp.Compare(q.Count, p.Count) })
	return out
}
