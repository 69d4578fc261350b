package rawfile_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tickscope/tickscope/internal/outfile"
	"github.com/tickscope/tickscope/internal/printable"
	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// writeRaw stores f at path, as --raw does but without its stamp.
func writeRaw(path string, f *rawfile.File, lim rawfile.Limits) error {
	var b bytes.Buffer
	if err := rawfile.Encode(&b, f, lim); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o600)
}

func sampleFile() *rawfile.File {
	return &rawfile.File{
		Tool:    rawfile.Tool{Name: "tickscope", Version: "test"},
		Created: time.Date(2026, 11, 30, 1, 2, 3, 0, time.UTC),
		Command: "measure",
		Query:   &timerinfo.Report{OS: "linux", Arch: "amd64", CPUs: 2, Linux: &timerinfo.Linux{KernelRelease: "6.1.0", HZ: 250}, Warnings: []string{}},
		Method:  "clock-abs",
		DelayNs: 1_000_000,
		Points: []rawfile.Point{{
			Requested:  timerinfo.Setting{SlackNs: 1},
			Granted:    timerinfo.Setting{SlackNs: 1},
			Conditions: timerinfo.Conditions{TimerSlackNs: 1, Priority: "SCHED_OTHER, nice 0"},
			Warmup:     10,
			Latencies:  []int64{1_030_000, 1_029_000, 1_081_000},
		}},
	}
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.json")
	want := sampleFile()
	if err := writeRaw(path, want, rawfile.Known); err != nil {
		t.Fatal(err)
	}
	got, err := rawfile.ReadFile(context.Background(), path, rawfile.Known)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip changed the file:\n got %+v\nwant %+v", got, want)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("Write left %d files behind, want only the result", len(entries))
	}
}

// A load (--load) is written and read back as it is, in each command
// that takes it.
func TestRoundTripUnderLoad(t *testing.T) {
	for _, cpus := range []int{1, 2, 64} {
		want := sampleFile()
		want.Query.CPUs = cpus
		want.Load = &rawfile.Load{Threads: 4 * cpus, Kind: rawfile.LoadCPU}
		path := filepath.Join(t.TempDir(), "run.json")
		if err := writeRaw(path, want, rawfile.Known); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if text := fmt.Sprintf(`"load":{"threads":%d,"kind":"cpu"}`, 4*cpus); !strings.Contains(string(data), text) {
			t.Errorf("the file does not hold %s: %s", text, data)
		}
		got, err := rawfile.ReadFile(context.Background(), path, rawfile.Known)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("round trip changed the file:\n got %+v\nwant %+v", got, want)
		}
	}
	// Without a load, there is no field at all.
	data, _ := json.Marshal(sampleFile())
	if strings.Contains(string(data), `"load"`) {
		t.Errorf("a file without a load names one: %s", data)
	}
}

func TestOutput(t *testing.T) {
	dir := t.TempDir()
	for _, bad := range []string{dir, filepath.Join(dir, "missing", "x.json")} {
		if _, err := outfile.OpenRaw(bad, rawfile.Known); err == nil {
			t.Errorf("OpenOutput(%s) was accepted", bad)
		}
	}
	// Opened and closed without a write: nothing is left behind.
	out, err := outfile.OpenRaw(filepath.Join(dir, "unused.json"), rawfile.Known)
	if err != nil {
		t.Fatal(err)
	}
	out.Close()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("an unused Output left %d files behind", len(entries))
	}
	// Written: only the file itself is there, and it reads back.
	path := filepath.Join(dir, "raw.json")
	if out, err = outfile.OpenRaw(path, rawfile.Known); err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := out.Write(sampleFile(), "test"); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the written Output left %d files, want 1", len(entries))
	}
	if _, err := rawfile.ReadFile(context.Background(), path, rawfile.Known); err != nil {
		t.Errorf("the written file does not read back: %v", err)
	}
}

func encode(t *testing.T, edit func(m map[string]any)) []byte {
	t.Helper()
	data, _ := json.Marshal(sampleFile())
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m["format"], m["version"] = rawfile.FormatName, rawfile.Version
	edit(m)
	out, _ := json.Marshal(m)
	return out
}

func point(m map[string]any) map[string]any { return m["points"].([]any)[0].(map[string]any) }

func TestParseRejects(t *testing.T) {
	good := encode(t, func(map[string]any) {})
	if _, err := rawfile.Parse(good); err != nil {
		t.Fatalf("a good file was rejected: %v", err)
	}
	// goodText is the good file as text, for edits a map cannot make
	// (duplicate keys, key order, bytes that are not UTF-8).
	goodText := string(good)
	replace := func(old, new string) []byte {
		t.Helper()
		if !strings.Contains(goodText, old) {
			t.Fatalf("the good file has no %q", old)
		}
		return []byte(strings.Replace(goodText, old, new, 1))
	}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "truncated"},
		{"truncated", good[:len(good)/2], "truncated"},
		{"not json", []byte("hello"), "line 1, column 1"},
		{"syntax error on line 2", []byte("{\"format\": \"tickscope-raw\",\n \"version\": 1 x}"), "line 2"},
		{"other format", encode(t, func(m map[string]any) { m["format"] = "csv" }), "not a tickscope raw-samples file"},
		{"no format", encode(t, func(m map[string]any) { delete(m, "format") }), "no \"format\""},
		{"future version", encode(t, func(m map[string]any) { m["version"] = 2 }), "newer tickscope"},
		{"version zero", encode(t, func(m map[string]any) { m["version"] = 0 }), "unknown version 0"},
		{"fractional version", encode(t, func(m map[string]any) { m["version"] = 1.5 }), "version: 1.5 is not an integer"},
		{"negative latency", encode(t, func(m map[string]any) { point(m)["latencies_ns"] = []any{1000, -5} }), "points[0].latencies_ns[1]: -5 is negative"},
		{"absurd latency", encode(t, func(m map[string]any) { point(m)["latencies_ns"] = []any{1e12} }), "points[0].latencies_ns[0]"},
		{"fractional latency", encode(t, func(m map[string]any) { point(m)["latencies_ns"] = []any{1.5} }), "points[0].latencies_ns[0]: 1.5 is not an integer"},
		{"no samples", encode(t, func(m map[string]any) { point(m)["latencies_ns"] = []any{} }), "points[0].latencies_ns: empty"},
		{"null samples", encode(t, func(m map[string]any) { point(m)["latencies_ns"] = nil }), "points[0].latencies_ns: want an array of integers (ns), found null"},
		{"no points", encode(t, func(m map[string]any) { m["points"] = []any{} }), "points: empty"},
		{"negative delay", encode(t, func(m map[string]any) { m["delay_ns"] = -1 }), "delay_ns: -1"},
		{"delay over 1 s", encode(t, func(m map[string]any) { m["delay_ns"] = rawfile.MaxDelayNs + 1 }), "delay_ns: 1000000001 is over the limit"},
		{"string latency", encode(t, func(m map[string]any) { point(m)["latencies_ns"] = []any{"x"} }), "latencies_ns"},
		{"no query", encode(t, func(m map[string]any) { delete(m, "query") }), "query: missing"},
		{"trailing data", append(append([]byte{}, good...), []byte("{}")...), "after top-level value"},
		{"negative slack", encode(t, func(m map[string]any) { point(m)["granted"] = map[string]any{"slack_ns": -3} }), "points[0].granted.slack_ns"},

		// Counts of what a point did not record, bounded by what it did.
		{"overruns of 2^62 in a 3-sample file", encode(t, func(m map[string]any) { point(m)["overruns"] = 1 << 62 }), "points[0].overruns: 4611686018427387904 deadlines 1000000 ns apart is more than the point's wall time (conditions.wall_ns 0) holds: at most 0"},
		{"overruns past the wall time", encode(t, func(m map[string]any) {
			point(m)["conditions"].(map[string]any)["wall_ns"] = 2_500_000
			point(m)["overruns"] = 3
		}), "points[0].overruns: 3 deadlines 1000000 ns apart is more than the point's wall time (conditions.wall_ns 2500000) holds: at most 2"},
		{"overruns of a relative method", encode(t, func(m map[string]any) {
			m["method"] = "nanosleep"
			point(m)["conditions"].(map[string]any)["wall_ns"] = 1_000_000_000
			point(m)["overruns"] = 1
		}), "points[0].overruns: 1, but the point's method waits relative to its call and skips no deadline; want 0"},
		{"a warm-up no measure takes", encode(t, func(m map[string]any) { point(m)["warmup_discarded"] = 1 << 40 }), "points[0].warmup_discarded: 1099511627776 is over the limit of 100 for a measure file"},

		// Duplicate keys, anywhere: a second value must not silently win.
		{"second version", replace(`"version":1}`, `"version":1,"version":1}`), "version: appears twice"},
		{"second delay_ns", replace(`"delay_ns":1000000,`, `"delay_ns":1000000,"delay_ns":2000000,`), "delay_ns: appears twice"},
		{"second points", replace(`"points":[`, `"points":[],"points":[`), "points: appears twice"},
		{"second query.os", replace(`"os":"linux"`, `"os":"linux","os":"linux"`), "query.os: appears twice"},
		{"second overruns in a point", replace(`"overruns":0,`, `"overruns":0,"overruns":5,`), "points[0].overruns: appears twice"},

		// Keys are case-sensitive, as the format's names are.
		{"DELAY_NS", replace(`"delay_ns":`, `"DELAY_NS":`), `field "DELAY_NS" is spelt "delay_ns"`},
		{"Points", replace(`"points":`, `"Points":`), `field "Points" is spelt "points"`},
		{"query.OS", replace(`"os":`, `"OS":`), `query: field "OS" is spelt "os"`},
		{"Latencies_NS", replace(`"latencies_ns":`, `"Latencies_NS":`), `points[0]: field "Latencies_NS" is spelt "latencies_ns"`},

		// Values outside what tickscope writes.
		{"command bogus", encode(t, func(m map[string]any) { m["command"] = "bogus" }), `command: "bogus" is not one of measure, bench, curve, compare`},
		{"command missing", encode(t, func(m map[string]any) { delete(m, "command") }), "command: missing; want one of measure"},
		{"command in capitals", encode(t, func(m map[string]any) { m["command"] = "MEASURE" }), `command: "MEASURE" is not one of`},
		{"created missing", encode(t, func(m map[string]any) { delete(m, "created") }), "created: missing"},
		{"created not a time", encode(t, func(m map[string]any) { m["created"] = "yesterday" }), `created: "yesterday" is not an RFC 3339 time in UTC`},
		{"created not UTC", encode(t, func(m map[string]any) { m["created"] = "2026-11-30T01:02:03+02:00" }), "created: \"2026-11-30T01:02:03+02:00\" is not an RFC 3339 time in UTC"},
		{"created a number", encode(t, func(m map[string]any) { m["created"] = 1 }), "created: want an RFC 3339 time in UTC as a string"},
		{"query.os plan9", encode(t, func(m map[string]any) { m["query"].(map[string]any)["os"] = "plan9" }), `query.os: "plan9" is not one of windows, linux, darwin`},
		{"query.os missing", encode(t, func(m map[string]any) { delete(m["query"].(map[string]any), "os") }), "query.os: missing"},
		{"query of linux without its block", encode(t, func(m map[string]any) { delete(m["query"].(map[string]any), "linux") }), "query.linux: missing"},
		{"query of linux with a windows block", encode(t, func(m map[string]any) { m["query"].(map[string]any)["windows"] = map[string]any{} }), "query.windows: present in a query of linux"},

		// Bytes that are not UTF-8, and escapes that are not characters.
		{"invalid UTF-8 in a value", replace(`"version":"test"`, "\"version\":\"te\xffst\""), "tool.version: invalid UTF-8"},
		{"invalid UTF-8 in a key", replace(`"method":`, "\"meth\xc3od\":"), "invalid UTF-8"},
		{"overlong UTF-8", replace(`"version":"test"`, "\"version\":\"\xc0\xaf\""), "tool.version: invalid UTF-8"},
		{"lone surrogate escape", replace(`"version":"test"`, `"version":"\ud800"`), "tool.version: a lone UTF-16 surrogate"},
		{"control character", replace(`"version":"test"`, "\"version\":\"a\tb\""), "tool.version: a control character"},

		// What a bench file holds.
		{"bench without a windows or linux block", benchOn(t, "darwin", nil), "query: a bench file holds a windows or a linux block"},
		{"negative bench.requests", benchOn(t, "linux", func(b map[string]any) { b["requests"] = -1 }), "bench.requests: -1 is outside 1..2000"},
		{"zero bench.requests", benchOn(t, "linux", func(b map[string]any) { b["requests"] = 0 }), "bench.requests: 0 is outside"},
		{"bench.requests over the grid", benchOn(t, "linux", func(b map[string]any) { b["requests"] = rawfile.MaxBenchRequests + 1 }), "bench.requests: 2001 is outside"},
		{"bench.samples under 20", benchOn(t, "linux", func(b map[string]any) { b["samples"] = 19 }), "bench.samples: 19 is outside 20..1000"},
		{"bench block in a measure file", encode(t, func(m map[string]any) { m["bench"] = map[string]any{"samples": 20, "requests": 1} }), "bench: present in a measure file"},
		{"bench without its block", encode(t, func(m map[string]any) { m["command"] = "bench" }), "bench: missing"},

		// What a compare or measure file holds.
		{"compare point without a method", encode(t, func(m map[string]any) { m["command"] = "compare" }), "points[0].method: missing"},
		{"compare cell measured twice", compareOf(t, 2, 1, 1, func(ps []any) { ps[1].(map[string]any)["method"] = "m0" }), "points[1]: method m0 under none was already measured in points[0]"},
		{"measure with two points", encode(t, func(m map[string]any) { m["points"] = []any{point(m), point(m)} }), "points: a measure file holds exactly one point, this one 2"},
		{"measure with three points", encode(t, func(m map[string]any) { m["points"] = []any{point(m), point(m), point(m)} }), "exactly one point, this one 3"},

		// Values only from what the writer produces: tickscope never
		// writes these, so a file that holds them was written by hand.
		{"conditions slack of 2 s", encode(t, func(m map[string]any) { point(m)["conditions"].(map[string]any)["timer_slack_ns"] = 2e9 }), "points[0].conditions.timer_slack_ns: 2000000000 is outside 0..1s"},
		{"cpus -2", encode(t, func(m map[string]any) { m["query"].(map[string]any)["cpus"] = -2 }), "query.cpus: -2 is outside 1..65536"},
		{"cpus 0", encode(t, func(m map[string]any) { m["query"].(map[string]any)["cpus"] = 0 }), "query.cpus: 0 is outside 1..65536"},
		{"slack and a period in one request", encode(t, func(m map[string]any) {
			point(m)["requested"] = map[string]any{"slack_ns": 1, "resolution_100ns": 5000}
		}), "points[0].requested: a Windows timer request in a file of linux"},
		{"a period and timeBeginPeriod in one request", benchWindows(t, func(p map[string]any) {
			p["requested"] = map[string]any{"resolution_100ns": 5000, "time_begin_period_ms": 1}
		}), "points[0].requested: both resolution_100ns and time_begin_period_ms"},
		{"stopped false", replace(`"overruns":0,`, `"overruns":0,"stopped":false,`), "points[0].stopped: false is what tickscope leaves out"},
		{"periodic false", replace(`"overruns":0,`, `"overruns":0,"periodic":false,`), "points[0].periodic: false is what tickscope leaves out"},
		{"simulated empty", replace(`"method":"clock-abs"`, `"simulated":"","method":"clock-abs"`), `simulated: "" is what tickscope leaves out`},
		{"slack_ns 0", encode(t, func(m map[string]any) { point(m)["requested"] = map[string]any{"slack_ns": 0} }), "points[0].requested.slack_ns: 0 is what tickscope leaves out"},
		{"windows null", replace(`"warnings":[]`, `"warnings":[],"windows":null`), "query.windows: null is what tickscope leaves out"},
		{"any method", encode(t, func(m map[string]any) { m["method"] = "busy-loop" }), `method: "busy-loop" is not a wait method of linux`},
		{"another OS's method", encode(t, func(m map[string]any) { m["method"] = "waitable-hr" }), `method: "waitable-hr" is not a wait method of linux`},
		{"any simulated scenario", encode(t, func(m map[string]any) { m["simulated"] = "made-up" }), `simulated: "made-up" is not a scenario of the model`},
		{"a scenario with a real query", encode(t, func(m map[string]any) { m["simulated"] = "published-pairs" }), "query: a simulated file's query is the model's"},
		{"any tool.name", encode(t, func(m map[string]any) { m["tool"].(map[string]any)["name"] = "other" }), `tool.name: "other" is not "tickscope"`},
		{"compare's method field in a measure point", encode(t, func(m map[string]any) { point(m)["method"] = "clock-abs" }), "points[0]: method and periodic are a compare file's"},
		{"a compare point's periodic wrong", compareOf(t, 1, 1, 1, func(ps []any) {
			ps[0].(map[string]any)["method"], ps[0].(map[string]any)["periodic"] = "nanosleep", true
		}), "points[0].periodic: true, but nanosleep waits relative to its call"},
		{"a periodic compare point without periodic", compareOf(t, 1, 1, 1, func(ps []any) { ps[0].(map[string]any)["method"] = "clock-abs" }), "points[0].periodic: false, but clock-abs keeps a periodic schedule"},
		{"a curve point without its delay", encode(t, func(m map[string]any) { m["command"] = "curve" }), "points[0].delay_ns: missing; every point of a curve file carries its delay"},
		{"a point delay outside a curve", encode(t, func(m map[string]any) { point(m)["delay_ns"] = 5 }), "points[0].delay_ns: a curve file's"},
		{"a phase outside a bench", encode(t, func(m map[string]any) { point(m)["phase"] = "recheck" }), "points[0].phase: a bench file's"},
		{"a period in a Linux condition", encode(t, func(m map[string]any) { point(m)["conditions"].(map[string]any)["current_before_100ns"] = 5000 }), "points[0].conditions: the Windows timer period in a file of linux"},
		{"throttling on Linux", encode(t, func(m map[string]any) { point(m)["conditions"].(map[string]any)["timer_throttling"] = "opted out" }), "points[0].conditions.timer_throttling: Windows 11's opt-out in a file of linux"},
		{"a simulated grant in a real file", benchWindows(t, func(p map[string]any) {
			p["granted"] = map[string]any{"resolution_100ns": 5000, "simulated": true}
		}), "points[0].granted.simulated: only a period the model granted is marked simulated"},

		// A load (--load): only what the writer produces.
		{"load in a curve file", encode(t, func(m map[string]any) {
			m["command"], m["load"] = "curve", map[string]any{"threads": 1, "kind": "cpu"}
		}), "load: present in a curve file; only measure, bench, compare take --load"},
		{"load in a simulated file", encode(t, func(m map[string]any) {
			m["simulated"], m["load"] = "narrow-band", map[string]any{"threads": 1, "kind": "cpu"}
		}), "load: present in a simulated file"},
		{"load of 0 threads", encode(t, func(m map[string]any) { m["load"] = map[string]any{"threads": 0, "kind": "cpu"} }), "load.threads: 0 is outside 1..8 (4 per CPU of the query's 2)"},
		{"load over 4 threads a CPU", encode(t, func(m map[string]any) { m["load"] = map[string]any{"threads": 9, "kind": "cpu"} }), "load.threads: 9 is outside 1..8"},
		{"load of negative threads", encode(t, func(m map[string]any) { m["load"] = map[string]any{"threads": -1, "kind": "cpu"} }), "load.threads: -1 is outside"},
		{"load without threads", encode(t, func(m map[string]any) { m["load"] = map[string]any{"kind": "cpu"} }), "load.threads: 0 is outside"},
		{"load of another kind", encode(t, func(m map[string]any) { m["load"] = map[string]any{"threads": 1, "kind": "memory"} }), `load.kind: "memory" is not "cpu"`},
		{"load without a kind", encode(t, func(m map[string]any) { m["load"] = map[string]any{"threads": 1} }), `load.kind: "" is not "cpu"`},
		{"load null", replace(`"points":`, `"load":null,"points":`), "load: null is what tickscope leaves out"},
		{"load a number", encode(t, func(m map[string]any) { m["load"] = 2 }), "load: want an object, found a number"},
		{"load threads fractional", encode(t, func(m map[string]any) { m["load"] = map[string]any{"threads": 1.5, "kind": "cpu"} }), "load.threads: 1.5 is not an integer"},
		{"unknown field in load", encode(t, func(m map[string]any) { m["load"] = map[string]any{"threads": 1, "kind": "cpu", "pinned": true} }), `load: unknown field "pinned"; allowed: threads, kind`},
		{"second load", replace(`"points":`, `"load":{"threads":1,"kind":"cpu"},"load":{"threads":2,"kind":"cpu"},"points":`), "load: appears twice"},

		// Messages name the path and what is allowed, never a Go type.
		{"an array", []byte("[]"), "the document: want an object (a tickscope raw-samples file), found an array"},
		{"a string", []byte(`"tickscope-raw"`), "found a string"},
		{"null", []byte("null"), "found null"},
		{"unknown field", encode(t, func(m map[string]any) { m["surprise"] = 1 }), `the document: unknown field "surprise"; allowed: format, version`},
		{"unknown nested field", encode(t, func(m map[string]any) { m["query"].(map[string]any)["linux"].(map[string]any)["surprise"] = 1 }), `query.linux: unknown field "surprise"; allowed: kernel_release`},
		{"unknown field in a point", encode(t, func(m map[string]any) { point(m)["surprise"] = 1 }), `points[0]: unknown field "surprise"`},
		{"points an object", encode(t, func(m map[string]any) { m["points"] = map[string]any{} }), "points: want an array, found an object"},
		{"cpus a string", encode(t, func(m map[string]any) { m["query"].(map[string]any)["cpus"] = "2" }), "query.cpus: want an integer, found a string"},
		{"granted period negative", encode(t, func(m map[string]any) { point(m)["granted"] = map[string]any{"resolution_100ns": -1} }), "points[0].granted.resolution_100ns: -1 is not a non-negative integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := rawfile.Parse(tt.data)
			if err == nil {
				t.Fatalf("accepted: %.300s", tt.data)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "rawfile.") || strings.Contains(err.Error(), "map[") {
				t.Errorf("error %q shows a Go type", err)
			}
		})
	}
}

// benchOn is a bench file from a host of os (its query holding that OS's
// block), with edit applied to its bench block.
func benchOn(t *testing.T, os string, edit func(b map[string]any)) []byte {
	t.Helper()
	return encode(t, func(m map[string]any) {
		q := m["query"].(map[string]any)
		delete(q, "linux")
		q["os"] = os
		switch os {
		case "linux":
			q["linux"] = map[string]any{"hz": 250}
		case "darwin":
			q["other"] = map[string]any{"kernel_release": "24.0.0"}
		}
		m["command"] = "bench"
		b := map[string]any{"samples": 20, "exhaustive": false, "seed": 1, "requests": 10}
		if edit != nil {
			edit(b)
		}
		m["bench"] = b
	})
}

// benchWindows is a real Windows bench file of one point, with edit
// applied to the point.
func benchWindows(t *testing.T, edit func(p map[string]any)) []byte {
	t.Helper()
	return encode(t, func(m map[string]any) {
		m["query"] = map[string]any{"os": "windows", "arch": "amd64", "cpus": 8, "warnings": []any{},
			"windows": map[string]any{"coarsest_100ns": 156250, "finest_100ns": 5000, "current_100ns": 156250}}
		m["command"], m["method"] = "bench", "sleep"
		m["bench"] = map[string]any{"samples": 20, "exhaustive": false, "seed": 1, "requests": 10}
		p := point(m)
		p["requested"] = map[string]any{"resolution_100ns": 5000}
		p["granted"] = map[string]any{"resolution_100ns": 5000}
		p["conditions"] = map[string]any{"priority": "x", "current_before_100ns": 156250, "current_after_100ns": 156250}
		if edit != nil {
			edit(p)
		}
	})
}

// compareOf is a compare file of methods × settings points of n samples
// each (methods m0, m1, ...; settings as slacks 1, 2, ... ns, the first
// none), with edit applied to its points.
func compareOf(t *testing.T, methods, settings, n int, edit func(ps []any)) []byte {
	t.Helper()
	return encode(t, func(m map[string]any) {
		m["command"], m["method"] = "compare", "(per point)"
		lat := make([]any, n)
		for i := range lat {
			lat[i] = 1_000_000
		}
		var ps []any
		for mi := range methods {
			for si := range settings {
				req := map[string]any{}
				if si > 0 {
					req["slack_ns"] = si
				}
				ps = append(ps, map[string]any{"method": fmt.Sprintf("m%d", mi), "requested": req, "granted": req,
					"conditions": map[string]any{"priority": "x"}, "warmup_discarded": 2, "overruns": 0, "latencies_ns": lat})
			}
		}
		if edit != nil {
			edit(ps)
		}
		m["points"] = ps
	})
}

func FuzzParse(f *testing.F) {
	seed := sampleFile()
	seed.Format, seed.Version = rawfile.FormatName, rawfile.Version
	data, _ := json.Marshal(seed)
	f.Add(data)
	f.Add([]byte(`{"format":"tickscope-raw","version":1}`))
	f.Add([]byte(`{"format":"tickscope-raw","version":1,"points":[{"latencies_ns":[-1]}]}`))
	// Seeds for each of the strict checks, so that the fuzzer starts next
	// to every rule: duplicates, case, UTF-8, each command's shape.
	text := string(data)
	for _, edit := range [][2]string{
		{`"version":1,`, `"version":1,"version":1,`},
		{`"delay_ns":`, `"DELAY_NS":`},
		{`"command":"measure"`, `"command":"bogus"`},
		{`"command":"measure"`, `"command":"compare"`},
		{`"command":"measure"`, `"command":"curve"`},
		{`"os":"linux"`, `"os":"plan9"`},
		{`"name":"tickscope"`, "\"name\":\"tick\xffscope\""},
		{`"name":"tickscope"`, `"name":"\ud83d\ude00\u00e9"`},
		{`"latencies_ns":[`, `"latencies_ns":[0,60000000000,`},
		{`"overruns":0`, `"overruns":0,"method":"clock-abs","periodic":true,"same_as_100ns":[1,2]`},
		{`"overruns":0`, `"overruns":0,"stopped":false`},
		{`"cpus":2`, `"cpus":-2`},
		{`"priority":"SCHED_OTHER, nice 0"`, `"priority":"\u001b]52;c;\u0007\u001b[2K\r recommend\u009b\u007f"`},
		{`"method":"clock-abs"`, `"method":"busy-loop"`},
		{`"slack_ns":1}`, `"slack_ns":1,"resolution_100ns":5000}`},
		{`"timer_slack_ns":1`, `"timer_slack_ns":2000000000`},
	} {
		f.Add([]byte(strings.Replace(text, edit[0], edit[1], 1)))
	}
	loaded := *seed
	loaded.Load = &rawfile.Load{Threads: 2, Kind: rawfile.LoadCPU}
	data, _ = json.Marshal(&loaded)
	f.Add(data)
	for _, edit := range [][2]string{
		{`"threads":2`, `"threads":9`},
		{`"threads":2`, `"threads":0`},
		{`"kind":"cpu"`, `"kind":"memory"`},
		{`"command":"measure"`, `"command":"curve"`},
		{`"method":"clock-abs"`, `"simulated":"narrow-band","method":"clock-abs"`},
	} {
		f.Add([]byte(strings.Replace(string(data), edit[0], edit[1], 1)))
	}
	explained := explainFile()
	explained.Format, explained.Version = rawfile.FormatName, rawfile.Version
	data, _ = json.Marshal(explained)
	f.Add(data)
	for _, edit := range [][2]string{
		{`"index":0`, `"index":2`},
		{`"index":0`, `"index":-1`},
		{`"layer":1`, `"layer":0`},
		{`"worst":10`, `"worst":1001`},
		{`"name":"cc1:\\x1b12"`, `"name":"cc1:\u001b12"`},
		{`"command":"measure"`, `"command":"bench"`},
	} {
		f.Add([]byte(strings.Replace(string(data), edit[0], edit[1], 1)))
	}
	bench := seed
	bench.Command, bench.Bench = "bench", &rawfile.BenchParams{Samples: 20, Seed: 3, Requests: 2}
	bench.Points = append(bench.Points, bench.Points[0])
	bench.Points[1].Phase = rawfile.PhaseRecheck
	data, _ = json.Marshal(bench)
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := rawfile.Parse(data)
		if err != nil {
			return
		}
		// Whatever is accepted must satisfy the invariants analysis relies
		// on, and survive a write and a read unchanged.
		for _, p := range file.Points {
			if len(p.Latencies) == 0 {
				t.Fatal("accepted a point without samples")
			}
			for _, v := range p.Latencies {
				if v < 0 || v > rawfile.MaxLatencyNs {
					t.Fatalf("accepted latency %d", v)
				}
			}
		}
		switch {
		case !slices.Contains(rawfile.Commands, file.Command):
			t.Fatalf("accepted command %q", file.Command)
		case file.Created.IsZero():
			t.Fatal("accepted a file without created")
		case !slices.Contains(rawfile.OSes, file.Query.OS):
			t.Fatalf("accepted query.os %q", file.Query.OS)
		case file.Command == "measure" && len(file.Points) != 1:
			t.Fatalf("accepted a measure file of %d points", len(file.Points))
		case file.Command == "bench" && (file.Bench == nil || file.Bench.Requests < 1 || file.Query.Windows == nil && file.Query.Linux == nil):
			t.Fatalf("accepted a bench file with %+v from %s", file.Bench, file.Query.OS)
		case file.Command != "bench" && file.Bench != nil:
			t.Fatal("accepted a bench block outside a bench file")
		case file.Load != nil && (!slices.Contains(rawfile.LoadCommands, file.Command) || file.Simulated != "" ||
			file.Load.Threads < 1 || file.Load.Threads > 4*file.Query.CPUs || file.Load.Kind != rawfile.LoadCPU):
			t.Fatalf("accepted load %+v in a %s file of %d CPUs (simulated %q)", *file.Load, file.Command, file.Query.CPUs, file.Simulated)
		}
		if e := file.Explain; e != nil {
			if file.Command != "measure" || e.Layer != 0 && e.Layer != 1 || e.Worst < 1 || e.Worst > rawfile.MaxExplainWorst || (e.Trace == nil) != (e.Layer == 0) {
				t.Fatalf("accepted an explain section %+v in a %s file", *e, file.Command)
			}
			seen := map[int]bool{}
			for _, w := range e.Late {
				if w.Index < 0 || w.Index >= len(file.Points[0].Latencies) || seen[w.Index] {
					t.Fatalf("accepted late wait %d of %d samples (seen %v)", w.Index, len(file.Points[0].Latencies), seen[w.Index])
				}
				seen[w.Index] = true
			}
		}
		if file.Command == "compare" {
			for _, p := range file.Points {
				if p.Method == "" {
					t.Fatal("accepted a compare point without a method")
				}
			}
		}
		if !utf8.Valid(data) {
			t.Fatal("accepted a document that is not UTF-8")
		}
		// Only what the writer produces: its name, a CPU count, printable
		// strings, the file's OS's methods.
		switch {
		case file.Tool.Name != rawfile.ToolName:
			t.Fatalf("accepted tool.name %q", file.Tool.Name)
		case file.Query.CPUs < 1:
			t.Fatalf("accepted cpus %d", file.Query.CPUs)
		case file.Method != rawfile.PerPointMethod && !hasKey(rawfile.Methods[file.Query.OS], file.Method):
			t.Fatalf("accepted method %q on %s", file.Method, file.Query.OS)
		}
		eachString(reflect.ValueOf(file), func(s string) {
			if !printable.String(s) {
				t.Fatalf("accepted a string that does not print: %q", s)
			}
		})
		// What the strict reader accepts, encoding/json (laxer) accepts too
		// and reads the same way: the strict reader adds refusals, never a
		// different meaning.
		var lax rawfile.File
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&lax); err != nil {
			t.Fatalf("encoding/json refuses an accepted file: %v", err)
		}
		if !reflect.DeepEqual(&lax, file) {
			t.Fatalf("encoding/json reads an accepted file differently:\n%+v\n%+v", lax, *file)
		}
		path := filepath.Join(t.TempDir(), "f.json")
		if err := writeRaw(path, file, rawfile.Known); err != nil {
			t.Fatalf("cannot write back an accepted file: %v", err)
		}
		again, err := rawfile.ReadFile(context.Background(), path, rawfile.Known)
		if err != nil {
			t.Fatalf("cannot read back an accepted file: %v", err)
		}
		if !reflect.DeepEqual(again, file) {
			t.Fatalf("round trip changed an accepted file")
		}
	})
}

func hasKey(m map[string]bool, k string) bool { _, ok := m[k]; return ok }

// eachString calls fn with every string in v.
func eachString(v reflect.Value, fn func(string)) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			eachString(v.Elem(), fn)
		}
	case reflect.String:
		fn(v.String())
	case reflect.Slice:
		for i := range v.Len() {
			eachString(v.Index(i), fn)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				eachString(v.Field(i), fn)
			}
		}
	}
}

// A point's not_running (samples taken while the process was stopped or
// the machine suspended) is written and read back as it is, a file
// written before it existed still reads, and Running leaves its samples
// out.
func TestNotRunning(t *testing.T) {
	f := sampleFile()
	f.Points[0].NotRunning = &rawfile.NotRunning{Samples: []int{1}, Continued: 1}
	path := filepath.Join(t.TempDir(), "run.json")
	if err := writeRaw(path, f, rawfile.Known); err != nil {
		t.Fatal(err)
	}
	got, err := rawfile.ReadFile(context.Background(), path, rawfile.Known)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, f) {
		t.Errorf("round trip changed the file:\n got %+v\nwant %+v", got.Points[0].NotRunning, f.Points[0].NotRunning)
	}
	if r := got.Points[0].Running(); !reflect.DeepEqual(r, []int64{1_030_000, 1_081_000}) || got.Points[0].LeftOut() != 1 {
		t.Errorf("Running = %v (left out %d), want the first and the last sample", r, got.Points[0].LeftOut())
	}
	if _, err := rawfile.Parse(encode(t, func(map[string]any) {})); err != nil {
		t.Errorf("a file without not_running was refused: %v", err)
	}
	for _, tt := range []struct {
		name string
		nr   any
		want string
	}{
		{"empty", map[string]any{}, "not_running: empty"},
		{"index past the end", map[string]any{"samples": []int{3}, "continued": 1}, "points[0].not_running.samples[0]: 3 is not an index"},
		{"negative index", map[string]any{"samples": []int{-1}, "continued": 1}, "not an index"},
		{"not ascending", map[string]any{"samples": []int{2, 1}, "continued": 1}, "does not follow"},
		{"twice", map[string]any{"samples": []int{1, 1}, "continued": 1}, "does not follow"},
		{"negative count", map[string]any{"continued": -1}, "continued: -1 is negative"},
		{"negative suspended", map[string]any{"suspended_ns": -5}, "suspended_ns: -5 is negative"},
		{"unknown field", map[string]any{"continued": 1, "stops": 2}, "stops"},
		{"written empty", map[string]any{"continued": 0, "suspended_ns": 4}, "continued"},
	} {
		data := encode(t, func(m map[string]any) { point(m)["not_running"] = tt.nr })
		if _, err := rawfile.Parse(data); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want one saying %q", tt.name, err, tt.want)
		}
	}
}

// A count at its bound reads: as many overruns as delays fit in the
// point's wall time, and a measure's largest warm-up.
func TestCountsAtTheirBound(t *testing.T) {
	f := sampleFile()
	f.Points[0].Conditions.WallNs = 2_500_000
	f.Points[0].Overruns = 2
	f.Points[0].Warmup = rawfile.MaxWarmup
	f.Format, f.Version = rawfile.FormatName, rawfile.Version
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rawfile.Parse(data); err != nil {
		t.Errorf("rejected: %v\n%s", err, data)
	}
}

// The scenarios a simulated file may name are the caller's: the zero
// Limits knows none, and the refusal lists the ones it was given.
func TestScenariosAreTheCallers(t *testing.T) {
	f := sampleFile()
	f.Simulated = "narrow-band"
	for _, tt := range []struct {
		lim  rawfile.Limits
		want string
	}{
		{rawfile.Known, "query: a simulated file's query is the model's"},
		{rawfile.Limits{}, `simulated: "narrow-band" is not a scenario of the model; the scenarios are `},
		{rawfile.Limits{Scenarios: []string{"one", "two"}}, `simulated: "narrow-band" is not a scenario of the model; the scenarios are one, two`},
	} {
		if err := f.Validate(tt.lim); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("Validate(%q) = %v, want %q", tt.lim.Scenarios, err, tt.want)
		}
	}
}
