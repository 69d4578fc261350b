package explain

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/attribution"
	"github.com/tickscope/tickscope/internal/printable"
	"github.com/tickscope/tickscope/internal/printable/printabletest"
	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// roundTrip writes the run's file as --raw does and reads it back as
// analyze does.
func roundTrip(t *testing.T, file *rawfile.File) *rawfile.File {
	t.Helper()
	// The fake host's query and method are no OS's: the file is this
	// machine's kind.
	file.Query = &timerinfo.Report{OS: "linux", Arch: "amd64", CPUs: 2, Linux: &timerinfo.Linux{}}
	file.Method = "clock-abs"
	file.Tool, file.Created = rawfile.Tool{Name: rawfile.ToolName, Version: "test"}, time.Date(2026, 12, 2, 1, 2, 3, 0, time.UTC)
	var b bytes.Buffer
	if err := rawfile.Encode(&b, file, rawfile.Limits{}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "run.json")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := rawfile.ReadFile(context.Background(), path, rawfile.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// printed is what explain prints of res: its text with --worst worst
// and its JSON as the command writes it (printable.JSON).
func printed(t *testing.T, res *Result, worst int) (text, js string) {
	t.Helper()
	var b bytes.Buffer
	res.WriteText(&b, worst)
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b.String(), string(printable.JSON(data))
}

// The raw file carries the attribution: read back, it prints the same
// text and JSON, byte for byte, at both layers, with names that do not
// print and lists both empty and null.
func TestRawFileReprintsTheReport(t *testing.T) {
	for _, c := range []struct {
		name   string
		trace  bool
		worst  int
		unread error
	}{{"layer 0", false, 3, nil}, {"layer 1", true, 1000, nil}, {"counters not read", true, 3, errors.New("no /proc here")}} {
		t.Run(c.name, func(t *testing.T) {
			sys := &fakeSystem{trace: c.trace, recordCost: 2000, countersErr: c.unread}
			h := &fakeHost{late: []int64{1000, 1000, 500_000}, sys: sys}
			res, file, err := Run(context.Background(), h, &timerinfo.Report{OS: "fake"}, sys, Options{Delay: time.Millisecond, Samples: 60, Over: 2 * time.Microsecond, Layer: LayerAuto, Worst: c.worst}, Reporting{})
			if err != nil {
				t.Fatal(err)
			}
			res.Method = "clock-abs"
			// Names from outside, that do not print, in every place one
			// can come from.
			hostile := printabletest.Forged + `C:\x64\` + "\xff"
			res.Late[0].Causes = append(res.Late[0].Causes, Cause{Cause: "thread", Name: hostile + ":7", Context: hostile, Ns: 0})
			res.Late[0].Blocking = hostile
			res.Late[1].Reasons = nil
			res.Notes = append(res.Notes, hostile)
			if res.Window != nil {
				res.Window.Interrupts = append(res.Window.Interrupts, Count{Name: hostile, Desc: hostile, Count: 3})
				res.Window.Idle = append(res.Window.Idle, IdleCount{State: hostile, LatencyUs: 2, Entries: 1})
				res.Window.Notes = append(res.Window.Notes, `plain \\server\share`)
			}
			if res.Trace != nil {
				res.Trace.Missing = nil
				res.Trace.Instance = hostile
			}
			if !c.trace {
				// A run under --load says so, from the file's load.
				file.Load = &rawfile.Load{Threads: 1, Kind: rawfile.LoadCPU}
				res.Load = &report.Load{Threads: 1, Kind: rawfile.LoadCPU, CPUs: 2}
			}
			res.Aggregate = aggregate(sumOf(res.Late))
			file.Explain = res.raw(c.worst)
			wantText, wantJSON := printed(t, res, c.worst)

			back := roundTrip(t, file)
			again, worst, err := FromFile(back)
			if err != nil {
				t.Fatal(err)
			}
			if worst != c.worst {
				t.Errorf("worst %d, want %d", worst, c.worst)
			}
			gotText, gotJSON := printed(t, again, worst)
			if gotText != wantText {
				t.Errorf("the text read back differs:\n%s\nwant:\n%s", gotText, wantText)
			}
			if gotJSON != wantJSON {
				t.Errorf("the JSON read back differs:\n%s\nwant:\n%s", gotJSON, wantJSON)
			}
			if !strings.Contains(wantJSON, `"missing_events": null`) && c.trace {
				t.Error("the null list is not in the JSON")
			}
			if c.unread != nil && !strings.Contains(wantJSON, `"window": null`) {
				t.Error("counters not read, and the window is not null in the JSON")
			}
		})
	}
}

// A string in the explain section that printable.Line does not write
// was not written by explain: FromFile refuses it.
func TestFromFileRefusesStringsLineDoesNotWrite(t *testing.T) {
	for _, s := range []string{`\x1B`, `a\x1b\`, `\q\x1b`, `\u00e9\x1b`, `\x41\x1b`} {
		f := &rawfile.File{Method: "clock-abs", DelayNs: 1, Points: []rawfile.Point{{Latencies: []int64{1}}},
			Explain: &rawfile.Explain{Worst: 1, Layer: 0, LayerWhy: "w", Waits: 1, ThresholdFrom: "p99", Notes: []string{s}}}
		if _, _, err := FromFile(f); err == nil {
			t.Errorf("FromFile accepted %q", s)
		}
	}
}

// The section's limit on --worst is explain's.
func TestRawWorstLimit(t *testing.T) {
	if rawfile.MaxExplainWorst != MaxWorst {
		t.Errorf("rawfile.MaxExplainWorst %d, explain's --worst maximum %d", rawfile.MaxExplainWorst, MaxWorst)
	}
}

// sumOf is the aggregate of late waits, as judge sums their attributions.
func sumOf(late []LateWait) attribution.Aggregate {
	var as []attribution.Attribution
	for _, l := range late {
		a := attribution.Attribution{LatenessNS: l.LatenessNs, ArmedLate: l.ArmedLate, NotAttributed: l.NotAttributed}
		for _, c := range l.Causes {
			a.Causes = append(a.Causes, attribution.Cause{Kind: attribution.Kind(c.Cause), Name: c.Name, Context: c.Context, NS: c.Ns})
		}
		as = append(as, a)
	}
	return attribution.Sum(as)
}

// TestFromFileOfAnotherHand: a file's explain section is anybody's to
// write. What the report prints of it reaches the terminal made
// printable, tickscope's own words included (the layer's reason, the
// events missing), and a cause explain never names is refused, or it
// would count as explained.
func TestFromFileOfAnotherHand(t *testing.T) {
	hostile := printable.Line(printabletest.Forged)
	section := func() *rawfile.Explain {
		return &rawfile.Explain{Worst: 1, Layer: 1, LayerWhy: hostile, Waits: 1, ThresholdFrom: "p99",
			Trace: &rawfile.ExplainTrace{Missing: []string{hostile}},
			Late:  []rawfile.ExplainWait{{Index: 0, LatenessNs: 5000, Causes: []rawfile.ExplainCause{{Cause: "thread", Name: hostile, Ns: 5000}}, TimerCPU: -1, RunCPU: -1}}}
	}
	f := &rawfile.File{Method: "clock-abs", DelayNs: 1, Points: []rawfile.Point{{Latencies: []int64{1}}}, Explain: section()}
	res, worst, err := FromFile(f)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	res.WriteText(&text, worst)
	printabletest.TerminalSafe(t, "explain's report of a hostile file", text.String())
	for _, cause := range []string{hostile, "made up"} {
		f.Explain = section()
		f.Explain.Late[0].Causes[0].Cause = cause
		if _, _, err := FromFile(f); err == nil || !strings.Contains(err.Error(), "no cause explain names") {
			t.Errorf("the cause %q: %v", cause, err)
		}
	}
}
