package rawfile

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/timerinfo"
)

// fullFiles are files as tickscope writes them with every string field
// there is filled: a Linux compare, a simulated Windows bench, a macOS
// measure.
func fullFiles() map[string]*File {
	dma := int32(0)
	created := time.Date(2026, 11, 30, 1, 2, 3, 0, time.UTC)
	tool := Tool{Name: "tickscope", Version: "0.1.0"}
	lat := []int64{1_000_000, 1_001_000}
	return map[string]*File{
		"linux compare": {
			Tool: tool, Created: created, Command: "compare", Method: "(per point)", DelayNs: 1_000_000,
			Query: &timerinfo.Report{OS: "linux", Arch: "amd64", CPUs: 2, Warnings: []string{"a warning"}, Linux: &timerinfo.Linux{
				KernelRelease: "6.1.0", KernelVersion: "#1 SMP", Preemption: "PREEMPT_DYNAMIC", HZ: 250, HighResTimers: "yes",
				NoHZ: "idle", KernelConfigSource: "/boot/config", Clocksource: "tsc", AvailableClocksource: []string{"tsc", "hpet"},
				CPUDMALatencyErr: "needs root", CPUIdleDriver: "intel_idle", CPUIdleGovernor: "menu",
				CPUIdleStates: []timerinfo.CPUIdleState{{Name: "C1", Description: "MWAIT 0x00"}},
			}},
			Points: []Point{
				{Method: "clock-abs", Periodic: true, Conditions: timerinfo.Conditions{Priority: "SCHED_FIFO 1"}, Latencies: lat},
				{Method: "nanosleep", Requested: timerinfo.Setting{SlackNs: 1, CPUDMALatencyUs: &dma}, Granted: timerinfo.Setting{SlackNs: 1, CPUDMALatencyUs: &dma},
					Conditions: timerinfo.Conditions{Priority: "SCHED_FIFO 1", TimerSlackNs: 1}, Latencies: lat},
			},
		},
		"simulated windows bench": {
			Tool: tool, Created: created, Command: "bench", Simulated: "published-pairs", Method: "sleep", DelayNs: 1_000_000,
			Bench: &BenchParams{Samples: 20, Requests: 2},
			Query: &timerinfo.Report{OS: "windows", Arch: "simulated", CPUs: 8, Warnings: []string{"held"}, Windows: &timerinfo.Windows{
				Coarsest100ns: 156250, Finest100ns: 5000, Current100ns: 156250, Version: "10.0.19045", Build: 19045, Product: "Windows 10 22H2",
				RequestModel: timerinfo.RequestModelPerProcess, DynamicTickDisabled: "no", PlatformTick: "default", PlatformClock: "unknown (simulated)",
			}},
			Points: []Point{
				{Requested: timerinfo.Setting{Resolution100ns: 5000}, Granted: timerinfo.Setting{Resolution100ns: 5000, Simulated: true},
					Conditions: timerinfo.Conditions{CurrentBefore100ns: 156250, CurrentAfter100ns: 156250, Priority: "simulated", TimerThrottling: timerinfo.ThrottlingOptedOut}, Latencies: lat},
				{Phase: PhaseRecheck, Requested: timerinfo.Setting{Resolution100ns: 5000}, Granted: timerinfo.Setting{Resolution100ns: 5000, Simulated: true},
					Conditions: timerinfo.Conditions{Priority: "simulated", TimerThrottling: "unavailable: not on this build"}, Latencies: lat},
			},
		},
		"darwin measure": {
			Tool: tool, Created: created, Command: "measure", Method: "go", DelayNs: 1_000_000,
			Query:  &timerinfo.Report{OS: "darwin", Arch: "arm64", CPUs: 8, Warnings: []string{}, Other: &timerinfo.Other{KernelRelease: "24.0.0", Unsupported: "timer settings"}},
			Points: []Point{{Conditions: timerinfo.Conditions{Priority: "normal"}, Latencies: lat}},
		},
	}
}

// The decoded strings of the hostile file: a clipboard write (OSC 52), an
// erased line and a forged one; CSI as C1; NUL; DEL; a newline; and a
// bidirectional override, which reorders what the line shows.
var hostileStrings = []string{
	"\x1b]52;c;Zm9yZ2Vk\a\x1b[2K\r  recommend FORGED",
	"a\u009b2Jb", "nul\x00", "del\x7f", "two\nlines", "\u202edesrever",
}

// TestEveryStringIsPrintable: the reader refuses, in every string field it
// accepts, each character that does not print, however the JSON spells it
// (encoding/json writes ESC as \u001b, U+009B and DEL as UTF-8), naming the
// field; and the writer escapes them, so that it never writes what the
// reader refuses.
func TestEveryStringIsPrintable(t *testing.T) {
	for name, f := range fullFiles() {
		t.Run(name, func(t *testing.T) {
			if err := f.Validate(Known); err != nil {
				t.Fatalf("the full file is refused: %v", err)
			}
			var paths []string
			walkStrings(reflect.ValueOf(f).Elem(), "", func(path string, _ reflect.Value) error {
				paths = append(paths, path)
				return nil
			})
			if len(paths) < 10 {
				t.Fatalf("only %d string fields found: %q", len(paths), paths)
			}
			for _, path := range append(paths, "created") {
				for _, bad := range hostileStrings {
					data := withString(t, f, path, bad)
					_, err := Parse(data)
					if err == nil {
						t.Errorf("%s = %q was accepted", path, bad)
						continue
					}
					if msg := err.Error(); !strings.Contains(msg, path+": a ") || !strings.Contains(msg, "in a string; a raw file's strings hold only printable text") {
						t.Errorf("%s = %q: %v does not name the field and the character", path, bad, err)
					}
				}
			}
		})
	}
	// A field's name is a string too.
	if _, err := Parse([]byte(`{"format":"tickscope-raw","version":1,"\u001b[2K":1}`)); err == nil || !strings.Contains(err.Error(), "control character (U+001B)") {
		t.Errorf("a name holding ESC: %v", err)
	}
}

// withString is f as JSON (encoding/json's) with the string at path set
// to s.
func withString(t *testing.T, f *File, path, s string) []byte {
	t.Helper()
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	m := doc.(map[string]any)
	m["format"], m["version"] = FormatName, Version
	doc = setPath(t, doc, path, s)
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// setPath sets the value at the JSON path ("query.linux.x[0]") in doc.
func setPath(t *testing.T, doc any, path string, v any) any {
	if path == "" {
		return v
	}
	head, rest, _ := strings.Cut(path, ".")
	name, index, isIndex := strings.Cut(head, "[")
	m := doc.(map[string]any)
	if !isIndex {
		m[name] = setPath(t, m[name], rest, v)
		return m
	}
	i := 0
	for _, c := range strings.TrimSuffix(index, "]") {
		i = i*10 + int(c-'0')
	}
	list := m[name].([]any)
	list[i] = setPath(t, list[i], rest, v)
	return m
}

// TestWriterEscapes: strings the OS gave the query (a kernel release, a
// warning) that do not print are written escaped, so the file is read back.
func TestWriterEscapes(t *testing.T) {
	for name, f := range fullFiles() {
		var paths []string
		walkStrings(reflect.ValueOf(f).Elem(), "", func(path string, s reflect.Value) error {
			if strings.HasPrefix(path, "query.") && path != "query.os" && path != "query.arch" {
				s.SetString(s.String() + "\x1b[2K\u009b\x7f\n")
				paths = append(paths, path)
			}
			return nil
		})
		var b strings.Builder
		if err := Encode(&b, f, Known); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		back, err := Parse([]byte(b.String()))
		if err != nil {
			t.Errorf("%s: written, then refused: %v", name, err)
			continue
		}
		if got := back.Query.Warnings; len(got) > 0 && !strings.HasSuffix(got[0], `\x1b[2K\u009b\x7f\n`) {
			t.Errorf("%s: the warning reads back as %q", name, got[0])
		}
	}
}
