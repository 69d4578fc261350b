package rawfile_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

func sampleFile() *rawfile.File {
	return &rawfile.File{
		Tool:    rawfile.Tool{Name: "tickscope", Version: "test"},
		Created: time.Date(2026, 11, 30, 1, 2, 3, 0, time.UTC),
		Command: "measure",
		Query:   &timerinfo.Report{OS: "linux", Arch: "amd64", CPUs: 2, Warnings: []string{}},
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
	if err := rawfile.Write(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := rawfile.ReadFile(path)
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

func TestOutput(t *testing.T) {
	dir := t.TempDir()
	for _, bad := range []string{dir, filepath.Join(dir, "missing", "x.json")} {
		if _, err := rawfile.OpenOutput(bad); err == nil {
			t.Errorf("OpenOutput(%s) was accepted", bad)
		}
	}
	// Opened and closed without a write: nothing is left behind.
	out, err := rawfile.OpenOutput(filepath.Join(dir, "unused.json"))
	if err != nil {
		t.Fatal(err)
	}
	out.Close()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("an unused Output left %d files behind", len(entries))
	}
	// Written: only the file itself is there, and it reads back.
	path := filepath.Join(dir, "raw.json")
	if out, err = rawfile.OpenOutput(path); err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := out.Write(sampleFile(), "test"); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the written Output left %d files, want 1", len(entries))
	}
	if _, err := rawfile.ReadFile(path); err != nil {
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
		{"negative latency", encode(t, func(m map[string]any) { point(m)["latencies_ns"] = []any{1000, -5} }), "points[0].latencies_ns[1]: -5 is negative"},
		{"absurd latency", encode(t, func(m map[string]any) { point(m)["latencies_ns"] = []any{1e12} }), "points[0].latencies_ns[0]"},
		{"no samples", encode(t, func(m map[string]any) { point(m)["latencies_ns"] = []any{} }), "points[0].latencies_ns: empty"},
		{"no points", encode(t, func(m map[string]any) { m["points"] = []any{} }), "points: empty"},
		{"negative delay", encode(t, func(m map[string]any) { m["delay_ns"] = -1 }), "delay_ns: -1"},
		{"string latency", encode(t, func(m map[string]any) { point(m)["latencies_ns"] = []any{"x"} }), "latencies_ns"},
		{"unknown field", encode(t, func(m map[string]any) { m["surprise"] = 1 }), "surprise"},
		{"no query", encode(t, func(m map[string]any) { delete(m, "query") }), "query: missing"},
		{"trailing data", append(append([]byte{}, good...), []byte("{}")...), "after top-level value"},
		{"negative slack", encode(t, func(m map[string]any) { point(m)["granted"] = map[string]any{"slack_ns": -3} }), "points[0].granted.slack_ns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := rawfile.Parse(tt.data)
			if err == nil {
				t.Fatalf("accepted: %s", tt.data)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	data, _ := json.Marshal(sampleFile())
	f.Add(data)
	f.Add([]byte(`{"format":"tickscope-raw","version":1}`))
	f.Add([]byte(`{"format":"tickscope-raw","version":1,"points":[{"latencies_ns":[-1]}]}`))
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
		path := filepath.Join(t.TempDir(), "f.json")
		if err := rawfile.Write(path, file); err != nil {
			t.Fatalf("cannot write back an accepted file: %v", err)
		}
		again, err := rawfile.ReadFile(path)
		if err != nil {
			t.Fatalf("cannot read back an accepted file: %v", err)
		}
		if !reflect.DeepEqual(again, file) {
			t.Fatalf("round trip changed an accepted file")
		}
	})
}
