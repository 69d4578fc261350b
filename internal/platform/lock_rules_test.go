package platform

import (
	"strings"
	"testing"
)

func TestParseRecord(t *testing.T) {
	for _, tt := range []struct {
		data string
		want int
	}{
		{"4242\n", 4242},
		{"1\n", 1},
		{"2147483647\n", 2147483647},
		{"", 0},
		{"\n", 0},
		{"4242", 0},         // torn: Lock writes the newline with the id
		{"0\n", 0},          // no process
		{"04242\n", 0},      // never written so
		{"-1\n", 0},         // kill(-1) is every process
		{" 4242\n", 0},      // never written so
		{"4242\n\n", 0},     // never written so
		{"+4242\n", 0},      // never written so
		{"0x10\n", 0},       // never written so
		{"2147483648\n", 0}, // beyond a process id
		{"99999999999\n", 0},
		{"4242\r\n", 0},
	} {
		if got := parseRecord([]byte(tt.data)); got != tt.want {
			t.Errorf("parseRecord(%q) = %d, want %d", tt.data, got, tt.want)
		}
	}
}

// The rule a process the holder's record names must pass before tickscope
// ends it: this tickscope's executable (or, on Windows, its windowless
// holder), run by the caller or by the record's writer.
func TestMayEnd(t *testing.T) {
	same := func(a, b string) bool { return a == b }
	rec := heldLock{PID: 77, Writer: "uid 0", Record: "/run/tickscope/holder.lock"}
	allowed := []string{"/usr/bin/tickscope"}
	for _, tt := range []struct {
		name    string
		p       recordedProcess
		allowed []string
		caller  string
		want    string // "" allowed, else a part of the refusal
	}{
		{"the holder, as the caller", recordedProcess{77, "/usr/bin/tickscope", "uid 0"}, allowed, "uid 0", ""},
		{"the holder, as the record's writer", recordedProcess{77, "/usr/bin/tickscope", "uid 0"}, allowed, "uid 1000", ""},
		{"the holder, as the caller not the writer", recordedProcess{77, "/usr/bin/tickscope", "uid 1000"}, allowed, "uid 1000", ""},
		{"another program", recordedProcess{77, "/usr/bin/sleep", "uid 0"}, allowed, "uid 0", `it runs "/usr/bin/sleep", not this tickscope ("/usr/bin/tickscope")`},
		{"tickscope run by another user", recordedProcess{77, "/usr/bin/tickscope", "uid 65534"}, allowed, "uid 0", "it runs as uid 65534, neither you (uid 0) nor the record's writer (uid 0)"},
		{"the windowless holder", recordedProcess{77, `C:\T\tickscope-holder.exe`, "S-1-5-21-1"}, []string{`C:\T\tickscope.exe`, `C:\T\tickscope-holder.exe`}, "S-1-5-21-1", ""},
		{"a name that drives a terminal is quoted", recordedProcess{77, "/tmp/\x1b]52;c;x\x07", "uid 0"}, allowed, "uid 0", `it runs "/tmp/\x1b]52;c;x\a"`},
		{"a C1 control is quoted", recordedProcess{77, "/tmp/\u009b2K", "uid 0"}, allowed, "uid 0", `it runs "/tmp/\u009b2K"`},
		{"a Windows path keeps its backslashes", recordedProcess{77, `C:\Windows\ping.exe`, "S-1"}, []string{`C:\T\tickscope.exe`}, "S-1", `it runs "C:\Windows\ping.exe", not this tickscope ("C:\T\tickscope.exe")`},
		{"nothing allowed", recordedProcess{77, "/usr/bin/tickscope", "uid 0"}, nil, "uid 0", "not this tickscope"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := mayEnd(tt.p, rec, tt.allowed, same, tt.caller)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && err == nil:
				t.Errorf("allowed, want a refusal saying %q", tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Errorf("refusal %q does not say %q", err, tt.want)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "not ending process 77, which the holder's record /run/tickscope/holder.lock names: ") {
				t.Errorf("refusal %q does not name the process and the record", err)
			}
			if err != nil && strings.ContainsAny(err.Error(), "\x1b\x07\u009b") {
				t.Errorf("refusal %q carries a control character", err)
			}
		})
	}
}
