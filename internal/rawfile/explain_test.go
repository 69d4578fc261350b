package rawfile_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/stats"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// explainFile is a measure file as explain writes it at layer 1: three
// samples, two late, a trace and an observer effect.
func explainFile() *rawfile.File {
	f := sampleFile()
	f.Explain = &rawfile.Explain{
		Worst: 10, Layer: 1, LayerWhy: "root and tracefs", SlackNs: 1, Waits: 2,
		LatenessP50Ns: 29_000, LatenessP99Ns: 81_000, ThresholdNs: 20_000, ThresholdFrom: "--over",
		Late: []rawfile.ExplainWait{
			{Index: 2, LatenessNs: 81_000, Causes: []rawfile.ExplainCause{{Cause: "blocking thread", Name: `cc1:\x1b12`, Ns: 80_000}, {Cause: "unexplained", Ns: 1000}}, Reasons: []string{}, TimerCPU: 1, RunCPU: 1, Blocking: "cc1:12"},
			{Index: 0, LatenessNs: 30_000, Causes: []rawfile.ExplainCause{{Cause: "IRQ delay", Context: "cpu0 idle", Ns: 30_000}}, Reasons: []string{"r"}, TimerCPU: -1, RunCPU: -1},
		},
		Window: &rawfile.ExplainWindow{Interrupts: []rawfile.ExplainCount{{Name: "LOC", Desc: "Local timer interrupts", Count: 9}}, Softirqs: []rawfile.ExplainCount{}, Idle: []rawfile.ExplainIdle{{State: "C1", LatencyUs: 2, Entries: 3, TimeUs: 4}}, Notes: []string{}},
		Trace:  &rawfile.ExplainTrace{Instance: "/sys/kernel/tracing/instances/tickscope-explain", Missing: nil, Events: 100, Removed: true},
		ObserverEffect: &rawfile.ExplainObserver{ChunkWaits: 1, OffWaits: 0, Traced: 2, Untraced: 1, TracedP50Ns: 29_000, TracedP99Ns: 81_000, UntracedP50Ns: 30_000, UntracedP99Ns: 30_000,
			P50Diff: stats.Interval{Estimate: -1000, Lo: -0.5, Hi: 1e-9, Coverage: 0.95}, P99Diff: stats.Interval{Estimate: 51_000, Lo: -1000, Hi: 51_000, Unbounded: true}},
		Notes: []string{"n"},
	}
	return f
}

func TestExplainRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.json")
	want := explainFile()
	if err := writeRaw(path, want, rawfile.Known); err != nil {
		t.Fatal(err)
	}
	got, err := rawfile.ReadFile(context.Background(), path, rawfile.Known)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip changed the file:\n got %+v\nwant %+v", got.Explain, want.Explain)
	}
}

// TestExplainRejects holds the section to what explain writes, and
// accepts what it can write.
func TestExplainRejects(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(f *rawfile.File)
		want string
	}{
		{"in a curve file", func(f *rawfile.File) { f.Command, f.Points[0].DelayNs = "curve", 1_000_000 }, "explain: present in a curve file"},
		{"simulated", func(f *rawfile.File) {
			f.Simulated, f.Method, f.Query.OS, f.Query.Arch, f.Query.Linux = "narrow-band", "sleep", "windows", "simulated", nil
			f.Query.Windows = &timerinfo.Windows{Coarsest100ns: 156250, Finest100ns: 5000, Current100ns: 156250}
			f.Points[0].Requested, f.Points[0].Granted, f.Points[0].Conditions = timerinfo.Setting{}, timerinfo.Setting{}, timerinfo.Conditions{}
		}, "explain: present in a simulated file"},
		{"worst 0", func(f *rawfile.File) { f.Explain.Worst = 0 }, "explain.worst: 0 is outside 1..1000"},
		{"layer 2", func(f *rawfile.File) { f.Explain.Layer = 2 }, "explain.layer: 2"},
		{"no layer_why", func(f *rawfile.File) { f.Explain.LayerWhy = "" }, "explain.layer_why: missing"},
		{"more waits than samples", func(f *rawfile.File) { f.Explain.Waits = 4 }, "explain.waits: 4 is outside 1..3"},
		{"threshold from elsewhere", func(f *rawfile.File) { f.Explain.ThresholdFrom = "p50" }, `explain.threshold_from: "p50"`},
		{"trace at layer 0", func(f *rawfile.File) { f.Explain.Layer, f.Explain.ObserverEffect = 0, nil }, "explain.trace: present at layer 0"},
		{"no trace at layer 1", func(f *rawfile.File) { f.Explain.Trace = nil }, "explain.trace: null at layer 1"},
		{"p50 over p99", func(f *rawfile.File) { f.Explain.LatenessP50Ns = 90_000 }, "explain.lateness_p50_ns: 90000 is over"},
		{"a wait twice", func(f *rawfile.File) { f.Explain.Late[1].Index = 2 }, "explain.late[1].index: wait 2 is already explain.late[0]"},
		{"a wait past the samples", func(f *rawfile.File) { f.Explain.Late[1].Index = 3 }, "explain.late[1].index: 3 is not an index"},
		{"not worst first", func(f *rawfile.File) { f.Explain.Late[1].LatenessNs = 90_000 }, "explain.late[1].lateness_ns: 90000 is over the wait before's 81000"},
		{"a CPU below -1", func(f *rawfile.File) { f.Explain.Late[0].RunCPU = -2 }, "explain.late[0].run_cpu: -2"},
		{"a cause without its kind", func(f *rawfile.File) { f.Explain.Late[0].Causes[0].Cause = "" }, "explain.late[0].causes[0].cause: missing"},
		{"an absurd cause", func(f *rawfile.File) { f.Explain.Late[0].Causes[0].Ns = 1 << 62 }, "explain.late[0].causes[0].ns"},
		{"more traced waits than samples", func(f *rawfile.File) { f.Explain.ObserverEffect.Untraced = 2 }, "explain.observer_effect: 2 traced and 2 untraced waits in a file of 3 samples"},
		{"negative steal", func(f *rawfile.File) { f.Explain.Window.StealNs = -1 }, "explain.window.steal_ns: -1 is negative"},
		{"a flight recorder as explain writes it", func(f *rawfile.File) {
			f.Explain.Trace.Flight = &rawfile.ExplainFlight{PagesRead: 9, PagesKept: 3, PeakPages: 5, PageBytes: 4096, NotCovered: 2}
		}, ""},
		{"a flight recorder keeping more than it held", func(f *rawfile.File) {
			f.Explain.Trace.Flight = &rawfile.ExplainFlight{PagesRead: 9, PagesKept: 6, PeakPages: 5}
		}, "explain.trace.flight_recorder: 6 pages kept, 5 at most at once, of 9 read"},
		{"more waits not covered than late", func(f *rawfile.File) {
			f.Explain.Trace.Flight = &rawfile.ExplainFlight{PagesRead: 9, NotCovered: 3}
		}, "explain.trace.flight_recorder.not_covered: 3 of 2 late waits"},
		{"pages larger than the kernel's", func(f *rawfile.File) {
			f.Explain.Trace.Flight = &rawfile.ExplainFlight{PagesRead: 9, PeakPages: 5, PageBytes: 32<<20 + 1}
		}, "explain.trace.flight_recorder.page_bytes: 33554433 is over 33554432 (32 MiB)"},
		{"the largest pages and counts", func(f *rawfile.File) {
			f.Explain.Trace.Flight = &rawfile.ExplainFlight{PagesRead: 1 << 36, PeakPages: 1 << 36, PagesKept: 1 << 36, PageBytes: 32 << 20}
		}, ""},
		{"pages whose bytes are no number", func(f *rawfile.File) {
			f.Explain.Trace.Flight = &rawfile.ExplainFlight{PagesRead: 1 << 62, PeakPages: 1 << 62, PageBytes: 4096}
		}, "explain.trace.flight_recorder.pages_read: 4611686018427387904 is over 68719476736"},
		{"a flight recorder without --over", func(f *rawfile.File) {
			f.Explain.ThresholdFrom, f.Explain.Trace.Flight = "p99", &rawfile.ExplainFlight{PagesRead: 9}
		}, "explain.trace.flight_recorder: present with a threshold not from --over"},
		{"steal of a long run", func(f *rawfile.File) { f.Explain.Window.StealNs = 1 << 50 }, ""},
		{"a string that does not print", func(f *rawfile.File) { f.Explain.Notes[0] = "\x1b[2K" }, "explain.notes[0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := explainFile()
			f.Format, f.Version = rawfile.FormatName, rawfile.Version
			c.edit(f)
			data, err := json.Marshal(f)
			if err != nil {
				t.Fatal(err)
			}
			_, err = rawfile.Parse(data)
			if c.want == "" {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
	// What the decoder refuses in any section: an unknown field, a field
	// twice, null where the writer leaves the field out, more late waits
	// than a measure has samples.
	f := explainFile()
	f.Format, f.Version = rawfile.FormatName, rawfile.Version
	data, _ := json.Marshal(f)
	text := string(data)
	for _, c := range []struct{ old, new, want string }{
		{`"worst":10`, `"worst":10,"worst":10`, "explain.worst: appears twice"},
		{`"index":2,`, `"index":2,"share":1,`, `unknown field "share"`},
		{`"index":2,`, `"Index":2,`, `field "Index" is spelt "index"`},
		{`,"explain":{`, `,"explain":null,"x":{`, "explain: null is what tickscope leaves out"},
	} {
		if !strings.Contains(text, c.old) {
			t.Fatalf("no %q in %s", c.old, text)
		}
		_, err := rawfile.Parse([]byte(strings.Replace(text, c.old, c.new, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.new, err, c.want)
		}
	}
	late := `"late":[` + strings.Repeat(`{},`, rawfile.MaxExplainLate) + `{}]`
	_, err := rawfile.Parse([]byte(strings.Replace(text, `"late":[`, late+`,"x":[`, 1)))
	if err == nil || !strings.Contains(err.Error(), "explain.late: more than 1000 late waits") {
		t.Errorf("a list of %d late waits: %v", rawfile.MaxExplainLate+1, err)
	}
}
