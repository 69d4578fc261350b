package printable_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tickscope/tickscope/internal/printable"
)

// The strings of the hostile raw file: a clipboard write (OSC 52), an
// erased line and a forged one, CSI as C1, NUL, DEL, a newline, and a
// bidirectional override that would show the line reversed.
var hostile = []struct{ in, line string }{
	{"\x1b]52;c;Zm9yZ2Vk\a\x1b[2K\r  recommend FORGED", `\x1b]52;c;Zm9yZ2Vk\a\x1b[2K\r  recommend FORGED`},
	{"a\u009b2Jb", `a\u009b2Jb`},
	{"nul\x00", `nul\x00`},
	{"del\x7f", `del\x7f`},
	{"two\nlines", `two\nlines`},
	{"tab\there", `tab\there`},
	{"\u202edesrever", `\u202edesrever`},
	{"line\u2028sep", `line\u2028sep`},
	{"soft\u00adhyphen", `soft\u00adhyphen`},
	{"bad \xff byte", `bad \xff byte`},
	{"private \ue000 use", `private \ue000 use`},
}

func TestLine(t *testing.T) {
	for _, tt := range hostile {
		if got := printable.Line(tt.in); got != tt.line {
			t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.line)
		}
		if printable.String(tt.in) {
			t.Errorf("String(%q) = true", tt.in)
		}
	}
	for _, s := range []string{"", "plain text", "Windows 10 Pro — 22H2 (®)", "µs ≤ 1 ms", "日本語", "emoji 🙂", "tab-free, comma, (parens)"} {
		if got := printable.Line(s); got != s || !printable.String(s) {
			t.Errorf("Line(%q) = %q, String %v: printable text is kept as it is", s, got, printable.String(s))
		}
	}
}

func TestJSON(t *testing.T) {
	for _, tt := range hostile {
		data, err := json.Marshal(map[string]string{"name": tt.in})
		if err != nil {
			t.Fatal(err)
		}
		out := printable.JSON(data)
		if !printable.String(string(out)) {
			t.Errorf("JSON(%s) = %q still holds a character that does not print", data, out)
		}
		var back map[string]string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("JSON(%s) = %s is not JSON: %v", data, out, err)
		}
		if want := strings.ToValidUTF8(tt.in, "\ufffd"); back["name"] != want {
			t.Errorf("JSON(%s) reads back %q, want %q", data, back["name"], want)
		}
	}
	indented := []byte("{\n\t\"a\": \"b\"\n}\n")
	if got := printable.JSON(indented); string(got) != string(indented) {
		t.Errorf("JSON changed indented printable JSON: %q", got)
	}
}

// FuzzLine: Line's text is one line of printable characters, and Line
// keeps printable text as it is.
func FuzzLine(f *testing.F) {
	for _, tt := range hostile {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		line := printable.Line(s)
		if !printable.String(line) || strings.ContainsAny(line, "\n\r") {
			t.Fatalf("Line(%q) = %q does not print as one line", s, line)
		}
		if printable.String(s) != (line == s) {
			t.Fatalf("Line(%q) = %q: changed printable text, or kept what does not print", s, line)
		}
	})
}

// FuzzJSON: JSON's output prints and means the same value.
func FuzzJSON(f *testing.F) {
	for _, tt := range hostile {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		data, err := json.Marshal([]string{s, "x"})
		if err != nil {
			t.Skip()
		}
		out := printable.JSON(data)
		if !utf8.Valid(out) || !printable.String(string(out)) {
			t.Fatalf("JSON(%s) = %q does not print", data, out)
		}
		var a, b []string
		if json.Unmarshal(data, &a) != nil || json.Unmarshal(out, &b) != nil || len(a) != 2 || a[0] != b[0] || a[1] != b[1] {
			t.Fatalf("JSON(%s) = %s reads back %q, want %q", data, out, b, a)
		}
	})
}
