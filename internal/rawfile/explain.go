package rawfile

import (
	"errors"
	"fmt"
	"time"

	"github.com/tickscope/tickscope/internal/stats"
)

// Explain is what `tickscope explain` made of a measure file's samples:
// the run's figures, each late wait's causes, the counters over the run,
// the trace and the observer effect, so that analyze prints explain's
// report again. The aggregate is not stored: it is the sum of the late
// waits' causes, which analyze adds up as explain did. Strings that came
// from outside tickscope (a thread's comm, an IRQ's name, an error's
// text) are stored as printable.Line writes them, so that they stay
// printable here and read back exactly.
type Explain struct {
	// Worst is --worst: the late waits the text shows one by one.
	Worst int `json:"worst"`
	// Layer is 0 or 1; LayerWhy says why that one.
	Layer    int    `json:"layer"`
	LayerWhy string `json:"layer_why"`
	SlackNs  int64  `json:"slack_ns"`
	// Waits is the waits explained (at layer 1 the traced ones: the
	// file's samples hold the untraced ones too), with their lateness.
	Waits         int   `json:"waits"`
	LatenessP50Ns int64 `json:"lateness_p50_ns"`
	LatenessP99Ns int64 `json:"lateness_p99_ns"`
	// ThresholdNs is the lateness a wait exceeded to be late;
	// ThresholdFrom "p99" (the run's own) or "--over".
	ThresholdNs   int64  `json:"threshold_ns"`
	ThresholdFrom string `json:"threshold_from"`
	// Late are the late waits, worst first.
	Late   []ExplainWait  `json:"late"`
	Window *ExplainWindow `json:"window"`
	// Trace is layer 1's, null at layer 0.
	Trace *ExplainTrace `json:"trace"`
	// ObserverEffect is tracing's cost (layer 1; null at layer 0 and for
	// a trace that cannot turn its recording off).
	ObserverEffect *ExplainObserver `json:"observer_effect"`
	Notes          []string         `json:"notes"`
}

// ExplainWait is one late wait's attribution.
type ExplainWait struct {
	// Index is the wait's place among the waits (0 the first).
	Index         int            `json:"index"`
	LatenessNs    int64          `json:"lateness_ns"`
	Causes        []ExplainCause `json:"causes"`
	ArmedLate     bool           `json:"armed_late"`
	NotAttributed bool           `json:"not_attributed"`
	Reasons       []string       `json:"reasons"`
	// TimerCPU and RunCPU are -1 when not known.
	TimerCPU int    `json:"timer_cpu"`
	RunCPU   int    `json:"run_cpu"`
	Blocking string `json:"blocking"`
}

// ExplainCause is one part of a wait's lateness.
type ExplainCause struct {
	Cause   string `json:"cause"`
	Name    string `json:"name"`
	Context string `json:"context"`
	Ns      int64  `json:"ns"`
}

// ExplainWindow is what the /proc and /sys counters did over the run.
type ExplainWindow struct {
	Interrupts []ExplainCount `json:"interrupts"`
	Softirqs   []ExplainCount `json:"softirqs"`
	StealNs    int64          `json:"steal_ns"`
	Idle       []ExplainIdle  `json:"idle"`
	Notes      []string       `json:"notes"`
}

// ExplainCount is one row of /proc/interrupts or /proc/softirqs.
type ExplainCount struct {
	Name  string `json:"name"`
	Desc  string `json:"desc"`
	Count uint64 `json:"count"`
}

// ExplainIdle is one idle state's entries.
type ExplainIdle struct {
	State     string `json:"state"`
	LatencyUs uint64 `json:"latency_us"`
	Entries   uint64 `json:"entries"`
	TimeUs    uint64 `json:"time_us"`
}

// ExplainTrace is what the trace said about itself.
type ExplainTrace struct {
	Instance        string   `json:"instance"`
	Mounted         bool     `json:"mounted"`
	LeftMounted     string   `json:"left_mounted"`
	RemovedLeftover bool     `json:"removed_leftover"`
	Missing         []string `json:"missing_events"`
	Events          int      `json:"events"`
	Lost            uint64   `json:"lost_events"`
	Removed         bool     `json:"removed"`
	// Flight is what explain --flight-recorder's flight recorder did;
	// absent without it.
	Flight *ExplainFlight `json:"flight_recorder,omitempty"`
}

// ExplainFlight is what the flight recorder read and kept.
type ExplainFlight struct {
	PagesRead  int `json:"pages_read"`
	PagesKept  int `json:"pages_kept"`
	PeakPages  int `json:"peak_pages"`
	PageBytes  int `json:"page_bytes"`
	NotCovered int `json:"not_covered"`
}

// ExplainObserver is the lateness of traced and untraced waits,
// measured side by side.
type ExplainObserver struct {
	ChunkWaits    int            `json:"chunk_waits"`
	OffWaits      int            `json:"off_waits"`
	Traced        int            `json:"traced"`
	Untraced      int            `json:"untraced"`
	TracedP50Ns   int64          `json:"traced_p50_ns"`
	TracedP99Ns   int64          `json:"traced_p99_ns"`
	UntracedP50Ns int64          `json:"untraced_p50_ns"`
	UntracedP99Ns int64          `json:"untraced_p99_ns"`
	P50Diff       stats.Interval `json:"p50_diff"`
	P99Diff       stats.Interval `json:"p99_diff"`
	Changed       bool           `json:"changed"`
}

// Limits of an explain section, from what explain writes.
const (
	// MaxExplainWorst is explain's --worst maximum (explain.MaxWorst).
	MaxExplainWorst = 1000
	// MaxExplainLate is the most late waits: the worst explain explains
	// (explain.MaxExplained).
	MaxExplainLate = 1000
	// MaxFlightPageBytes is the largest ring-buffer page the flight
	// recorder's page_bytes says: the kernel's largest sub-buffer, 128
	// memory pages (buffer_subbuf_size_kb) of at most 256 KiB (tickscope's
	// own instance keeps the default, one memory page).
	MaxFlightPageBytes = 32 << 20
	// MaxFlightPages bounds its page counts, above what a year's run
	// reads (about 2^35 pages at 50,000 a minute), so that pages times
	// page_bytes is a number.
	MaxFlightPages = 1 << 36
)

// ExplainThresholds are threshold_from's values.
var ExplainThresholds = []string{"p99", "--over"}

// validateExplain holds the explain section to what explain writes: in
// a real measure file of its own (not the model's), its late waits
// distinct waits of the file, worst first, a trace exactly at layer 1.
func (f *File) validateExplain() error {
	e := f.Explain
	if e == nil {
		return nil
	}
	switch {
	case f.Command != "measure":
		return fmt.Errorf("explain: present in a %s file; explain writes a measure file", f.Command)
	case f.Simulated != "":
		return errors.New("explain: present in a simulated file; explain runs on this machine only")
	case e.Worst < 1 || e.Worst > MaxExplainWorst:
		return fmt.Errorf("explain.worst: %d is outside 1..%d", e.Worst, MaxExplainWorst)
	case e.Layer != 0 && e.Layer != 1:
		return fmt.Errorf("explain.layer: %d is not 0 or 1", e.Layer)
	case e.LayerWhy == "":
		return errors.New("explain.layer_why: missing")
	case e.SlackNs < 0 || e.SlackNs > int64(time.Second):
		return fmt.Errorf("explain.slack_ns: %d is outside 0..1s", e.SlackNs)
	case e.Waits < 1 || e.Waits > len(f.Points[0].Latencies):
		return fmt.Errorf("explain.waits: %d is outside 1..%d, the file's samples", e.Waits, len(f.Points[0].Latencies))
	case e.ThresholdFrom != ExplainThresholds[0] && e.ThresholdFrom != ExplainThresholds[1]:
		return fmt.Errorf("explain.threshold_from: %q is not %q or %q", e.ThresholdFrom, ExplainThresholds[0], ExplainThresholds[1])
	case len(e.Late) > e.Waits:
		return fmt.Errorf("explain.late: %d late waits of %d waits", len(e.Late), e.Waits)
	case e.Layer == 0 && e.Trace != nil:
		return errors.New("explain.trace: present at layer 0, which traces nothing")
	case e.Layer == 1 && e.Trace == nil:
		return errors.New("explain.trace: null at layer 1, which traces")
	case e.Layer == 0 && e.ObserverEffect != nil:
		return errors.New("explain.observer_effect: present at layer 0, which traces nothing")
	}
	for _, v := range []struct {
		name string
		ns   int64
	}{{"lateness_p50_ns", e.LatenessP50Ns}, {"lateness_p99_ns", e.LatenessP99Ns}, {"threshold_ns", e.ThresholdNs}} {
		if v.ns < -MaxLatencyNs || v.ns > MaxLatencyNs {
			return fmt.Errorf("explain.%s: %d is outside ±%v", v.name, v.ns, time.Duration(MaxLatencyNs))
		}
	}
	if e.LatenessP50Ns > e.LatenessP99Ns {
		return fmt.Errorf("explain.lateness_p50_ns: %d is over lateness_p99_ns %d", e.LatenessP50Ns, e.LatenessP99Ns)
	}
	// Steal is every CPU's over the whole run, which may be hours: only
	// its sign is known.
	if e.Window != nil && e.Window.StealNs < 0 {
		return fmt.Errorf("explain.window.steal_ns: %d is negative", e.Window.StealNs)
	}
	seen := make(map[int]int, len(e.Late))
	for i, w := range e.Late {
		where := fmt.Sprintf("explain.late[%d]", i)
		if j, dup := seen[w.Index]; dup {
			return fmt.Errorf("%s.index: wait %d is already explain.late[%d]", where, w.Index, j)
		}
		seen[w.Index] = i
		switch {
		case w.Index < 0 || w.Index >= len(f.Points[0].Latencies):
			return fmt.Errorf("%s.index: %d is not an index into the file's %d samples", where, w.Index, len(f.Points[0].Latencies))
		case w.LatenessNs < -MaxLatencyNs || w.LatenessNs > MaxLatencyNs:
			return fmt.Errorf("%s.lateness_ns: %d is outside ±%v", where, w.LatenessNs, time.Duration(MaxLatencyNs))
		case i > 0 && w.LatenessNs > e.Late[i-1].LatenessNs:
			return fmt.Errorf("%s.lateness_ns: %d is over the wait before's %d; the late waits come worst first", where, w.LatenessNs, e.Late[i-1].LatenessNs)
		case w.TimerCPU < -1 || w.TimerCPU >= MaxCPUs:
			return fmt.Errorf("%s.timer_cpu: %d is outside -1..%d", where, w.TimerCPU, MaxCPUs-1)
		case w.RunCPU < -1 || w.RunCPU >= MaxCPUs:
			return fmt.Errorf("%s.run_cpu: %d is outside -1..%d", where, w.RunCPU, MaxCPUs-1)
		}
		for j, c := range w.Causes {
			switch {
			case c.Cause == "":
				return fmt.Errorf("%s.causes[%d].cause: missing", where, j)
			case c.Ns < -MaxLatencyNs || c.Ns > MaxLatencyNs:
				return fmt.Errorf("%s.causes[%d].ns: %d is outside ±%v", where, j, c.Ns, time.Duration(MaxLatencyNs))
			}
		}
	}
	if t := e.Trace; t != nil && t.Flight != nil {
		fl := t.Flight
		switch {
		case fl.PagesRead < 0 || fl.PagesKept < 0 || fl.PeakPages < 0 || fl.PageBytes < 0 || fl.NotCovered < 0:
			return errors.New("explain.trace.flight_recorder: a count is negative")
		case fl.PagesRead > MaxFlightPages:
			return fmt.Errorf("explain.trace.flight_recorder.pages_read: %d is over %d", fl.PagesRead, int64(MaxFlightPages))
		case fl.PageBytes > MaxFlightPageBytes:
			return fmt.Errorf("explain.trace.flight_recorder.page_bytes: %d is over %d (32 MiB)", fl.PageBytes, MaxFlightPageBytes)
		case fl.PagesKept > fl.PeakPages || fl.PeakPages > fl.PagesRead:
			return fmt.Errorf("explain.trace.flight_recorder: %d pages kept, %d at most at once, of %d read; want kept ≤ at most ≤ read", fl.PagesKept, fl.PeakPages, fl.PagesRead)
		case fl.NotCovered > len(e.Late):
			return fmt.Errorf("explain.trace.flight_recorder.not_covered: %d of %d late waits", fl.NotCovered, len(e.Late))
		case e.ThresholdFrom != "--over":
			return errors.New("explain.trace.flight_recorder: present with a threshold not from --over, which the flight recorder needs")
		}
	}
	if o := e.ObserverEffect; o != nil {
		switch {
		case o.ChunkWaits < 1 || o.OffWaits < 0:
			return fmt.Errorf("explain.observer_effect: chunks of %d and %d waits; want at least 1 and 0", o.ChunkWaits, o.OffWaits)
		case o.Traced < 0 || o.Untraced < 0 || o.Traced+o.Untraced > len(f.Points[0].Latencies):
			return fmt.Errorf("explain.observer_effect: %d traced and %d untraced waits in a file of %d samples", o.Traced, o.Untraced, len(f.Points[0].Latencies))
		}
	}
	return nil
}
