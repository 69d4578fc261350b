package printable_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tickscope/tickscope/internal/printable"
	"github.com/tickscope/tickscope/internal/printable/printabletest"
)

// The strings of the hostile raw file: a clipboard write (OSC 52), an
// erased line and a forged one, CSI as C1, NUL, DEL, a newline, and a
// bidirectional override that would show the line reversed; with how Line
// and Message write each.
var hostile = []struct{ in, line, message string }{
	{"\x1b]52;c;Zm9yZ2Vk\a\x1b[2K\r  recommend FORGED", `\x1b]52;c;Zm9yZ2Vk\x07\x1b[2K\x0d  recommend FORGED`, `\x1b]52;c;Zm9yZ2Vk\a\x1b[2K\r  recommend FORGED`},
	{"a\u009b2Jb", `a\u009b2Jb`, `a\u009b2Jb`},
	{"nul\x00", `nul\x00`, `nul\x00`},
	{"del\x7f", `del\x7f`, `del\x7f`},
	{"two\nlines", `two\x0alines`, `two\nlines`},
	{"tab\there", `tab\x09here`, `tab\there`},
	{"\u202edesrever", `\u202edesrever`, `\u202edesrever`},
	{"line\u2028sep", `line\u2028sep`, `line\u2028sep`},
	{"soft\u00adhyphen", `soft\u00adhyphen`, `soft\u00adhyphen`},
	{"bad \xff byte", `bad \xff byte`, `bad \xff byte`},
	{"private \ue000 use", `private \ue000 use`, `private \ue000 use`},
	{"tag \U000e0001", `tag \U000e0001`, `tag \U000e0001`},
	{`C:\x1b` + "\x1b", `C:\\x1b\x1b`, `C:\x1b\x1b`},
}

// Printable text both keep as it is, paths with backslashes included.
var plain = []string{"", "plain text", "Windows 10 Pro — 22H2 (®)", "µs ≤ 1 ms", "日本語", "emoji 🙂", "tab-free, comma, (parens)",
	`C:\Users\bob\tools\new\x64\bin`, `\x20\x7e\uface\U0001f642`, `\\server\share\a`, `\Device\HarddiskVolume3\Windows\System32\svchost.exe`, `C:\Program Files (x86)\app.exe`, `\x1`, `\u12`, `\U0001234`, `\xg0`, `end\`}

func TestLine(t *testing.T) {
	for _, tt := range hostile {
		if got := printable.Line(tt.in); got != tt.line {
			t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.line)
		}
		if got := printable.Message(tt.in); got != tt.message {
			t.Errorf("Message(%q) = %q, want %q", tt.in, got, tt.message)
		}
		if printable.String(tt.in) {
			t.Errorf("String(%q) = true", tt.in)
		}
	}
	for _, s := range plain {
		if got := printable.Line(s); got != s || !printable.String(s) {
			t.Errorf("Line(%q) = %q, String %v: printable text is kept as it is", s, got, printable.String(s))
		}
		if got := printable.Message(s); got != s {
			t.Errorf("Message(%q) = %q: printable text is kept as it is", s, got)
		}
	}
}

// TestLineTellsApart: printable text that reads as an escape is escaped
// itself, so that it and the text it would stand for show differently
// (a name typed as lit\x1b, and lit followed by ESC, would print the
// same).
func TestLineTellsApart(t *testing.T) {
	for _, pair := range [][2]string{
		{`lit\x1b`, "lit\x1b"},
		{`a\u009b`, "a\u009b"},
		{`t\U000e0001`, "t\U000e0001"},
		{`b\xff`, "b\xff"},
		{`\x1B`, "\x1b"},
		{`bin\x86`, "bin\x86"},
		{`\\x1b`, `\` + "\x1b"},
		{`\` + "\x1b", `\x5c` + "\x1b"},
	} {
		a, b := printable.Line(pair[0]), printable.Line(pair[1])
		if a == b {
			t.Errorf("Line(%q) = Line(%q) = %q", pair[0], pair[1], a)
		}
		for _, s := range pair {
			if back, ok := printable.Unline(printable.Line(s)); !ok || back != s {
				t.Errorf("Line(%q) = %q reads back %q", s, printable.Line(s), back)
			}
		}
	}
	if got, want := printable.Line(`lit\x1b`), `lit\\x1b`; got != want {
		t.Errorf("Line(`lit\\x1b`) = %q, want %q", got, want)
	}
}

// TestMessageIdempotent: a message that holds values Line made printable
// passes through Message unchanged.
func TestMessageIdempotent(t *testing.T) {
	for _, tt := range hostile {
		msg := "process 7 " + printable.Line(tt.in) + " holds it"
		if got := printable.Message(msg); got != msg {
			t.Errorf("Message(%q) = %q", msg, got)
		}
		if m := printable.Message(tt.in); printable.Message(m) != m {
			t.Errorf("Message(Message(%q)) = %q, want %q", tt.in, printable.Message(m), m)
		}
	}
}

// FuzzLine: Line's text is one line of printable characters, keeps plain
// text as it is, and reads back as the string it came from, so that no
// two strings give the same line.
func FuzzLine(f *testing.F) {
	for _, tt := range hostile {
		f.Add(tt.in, tt.line)
	}
	for _, s := range plain {
		f.Add(s, s+"\x1b")
	}
	f.Add(`lit\x1b`, "lit\x1b")
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, s := range []string{a, b} {
			line := printable.Line(s)
			if !printable.String(line) || strings.ContainsAny(line, "\n\r") {
				t.Fatalf("Line(%q) = %q does not print as one line", s, line)
			}
			if back, ok := printable.Unline(line); !ok || back != s {
				t.Fatalf("Line(%q) = %q reads back %q", s, line, back)
			}
			if m := printable.Message(s); !printable.String(m) || printable.Message(m) != m || printable.Message(line) != line {
				t.Fatalf("Message(%q) = %q is not one printable line that Message keeps", s, m)
			}
		}
		if a != b && printable.Line(a) == printable.Line(b) {
			t.Fatalf("Line(%q) = Line(%q) = %q", a, b, printable.Line(a))
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

// FuzzUnline: Unline reads Line's text back as the string it came from,
// and any string it reads is the one Line writes for what it read.
func FuzzUnline(f *testing.F) {
	for _, s := range []string{"", "plain", printabletest.Forged, `C:\Users\bob\x64`, `\\server\share`, "lit\x1b", `lit\x1b`, "\xff\xfe", `end\`, "\u009b", "\U0010ffff", `\u00e9`, `\x1B`, `\q\x1b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		line := printable.Line(s)
		if got, ok := printable.Unline(line); !ok || got != s {
			t.Fatalf("Unline(Line(%q) = %q) = %q, %v", s, line, got, ok)
		}
		if got, ok := printable.Unline(s); ok && printable.Line(got) != s {
			t.Fatalf("Unline(%q) = %q, which Line writes as %q", s, got, printable.Line(got))
		}
	})
}
