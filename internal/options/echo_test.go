package options_test

import (
	"errors"
	"io/fs"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tickscope/tickscope/internal/options"
)

func TestValue(t *testing.T) {
	long := strings.Repeat("x", 100_000)
	for _, tt := range []struct {
		in   any
		want string
	}{
		{"nanosleep", "nanosleep"},
		{"", `""`},
		{"a b", `"a b"`},
		{"a\nb", `"a\nb"`},
		{"tab\there", `"tab\there"`},
		{"\x1b[31mred", `"\x1b[31mred"`},
		{"\xff", `"\xff"`},
		{"µs", "µs"},
		{1500 * time.Microsecond, "1.5ms"},
		{-5, "-5"},
		{long, strings.Repeat("x", 64) + "… (100000 characters)"},
		{long + "\n", `"` + strings.Repeat("x", 64) + `…" (100001 characters)`},
		{strings.Repeat("é", 65), strings.Repeat("é", 64) + "… (65 characters)"},
		{strings.Repeat("é", 64), strings.Repeat("é", 64)},
	} {
		if got := options.Value(tt.in); got != tt.want {
			t.Errorf("Value(%.20q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestOneLine(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain text, µs and …", "plain text, µs and …"},
		{"a\nb", `a\nb`},
		{"a\r\nb", `a\r\nb`},
		{"bell\a", `bell\a`},
		{"bad \xff byte", `bad \xff byte`},
		{"line\u2028sep", `line\u2028sep`},
	} {
		if got := options.OneLine(tt.in); got != tt.want {
			t.Errorf("OneLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzOneLine(f *testing.F) {
	for _, seed := range []string{"", "a\nb", "\xff\xfe", "\x1b[2J", "ok µs"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := options.OneLine(s)
		if !utf8.ValidString(out) {
			t.Fatalf("OneLine(%q) = %q: invalid UTF-8", s, out)
		}
		for _, r := range out {
			if r != ' ' && !unicode.IsPrint(r) {
				t.Fatalf("OneLine(%q) = %q: holds %U", s, out, r)
			}
		}
		if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return r != ' ' && !unicode.IsPrint(r) }) < 0 && out != s {
			t.Fatalf("OneLine changed printable %q to %q", s, out)
		}
	})
}

func TestBadFlagAndUsagefAreOneShortLine(t *testing.T) {
	long := strings.Repeat("y", 100_000)
	for _, err := range []error{
		options.BadFlag("method", "a\nb"+long, "valid: %s", "x"),
		options.BadFlag("method", "ok", "unknown %q", "c\nd"+long),
		options.Usagef("tickscope run: %q before --: %s", long, "e\nf"),
	} {
		msg := err.Error()
		if strings.ContainsAny(msg, "\n\r") || len(msg) > 600 {
			t.Errorf("%d bytes, newline %v: %.120q", len(msg), strings.ContainsAny(msg, "\n"), msg)
		}
	}
	if got := options.BadFlag("methods", "", "empty").Error(); got != `--methods "": empty` {
		t.Errorf("empty value: %q", got)
	}
}

func TestParseDuration(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"1ms", time.Millisecond, ""},
		{"1.5ms", 1500 * time.Microsecond, ""},
		{"1.5us", 1500, ""},
		{"1.5µs", 1500, ""},
		{"1.5μs", 1500, ""},
		{"250ns", 250, ""},
		{"0", 0, ""},
		{"-0", 0, ""},
		{"0s", 0, ""},
		{"-3us", -3000, ""},
		{"+2s", 2 * time.Second, ""},
		{"1h2m3.5s", time.Hour + 2*time.Minute + 3500*time.Millisecond, ""},
		{".5s", 500 * time.Millisecond, ""},
		{"5.s", 5 * time.Second, ""},
		{"0.000000001s", 1, ""},
		{"0.5ns0.5ns", 1, ""}, // exact: time.ParseDuration truncates each part and says 0
		{"2562047h47m16.854775807s", 1<<63 - 1, ""},
		{"-2562047h47m16.854775808s", -1 << 63, ""},
		{"1.5ns", 0, "not a whole number of nanoseconds (it lies between 1ns and 2ns)"},
		{"-1.5ns", 0, "not a whole number of nanoseconds (it lies between -2ns and -1ns)"},
		{"0.5ns", 0, "not a whole number of nanoseconds (it lies between 0ns and 1ns)"},
		{"1.0000000001s", 0, "not a whole number of nanoseconds"},
		{"0.0001us", 0, "not a whole number of nanoseconds"},
		{"2562047h47m16.854775808s", 0, "out of range"},
		{"", 0, "not a duration"},
		{"-", 0, "not a duration"},
		{"1", 0, "not a duration"},
		{"soon", 0, "not a duration"},
		{"1..5ms", 0, "not a duration"},
		{".ms", 0, "not a duration"},
		{"1e3ms", 0, "not a duration"},
		{"1 ms", 0, "not a duration"},
		{"1ms ", 0, "not a duration"},
		{"--1ms", 0, "not a duration"},
	} {
		got, err := options.ParseDuration(tt.in)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("ParseDuration(%q): %v", tt.in, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ParseDuration(%q) = %v, %v; want an error with %q", tt.in, got, err, tt.err)
		case tt.err == "" && got != tt.want:
			t.Errorf("ParseDuration(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// FuzzParseDuration holds the strict parser to time.ParseDuration: it
// accepts only what time.ParseDuration accepts (or refuses as out of
// range), and where every part is a whole number of ns the two agree.
func FuzzParseDuration(f *testing.F) {
	for _, seed := range []string{"1ms", "1.5ns", "0.5ns0.5ns", "-3us", "1h2m3.5s", "0", "", ".5s", "9999999999h", "1.000000001s"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := options.ParseDuration(s)
		want, timeErr := time.ParseDuration(s)
		if err == nil && timeErr != nil {
			// time.ParseDuration refuses near the limits what sums
			// within them; nothing else.
			if got > -time.Hour*2_000_000 && got < time.Hour*2_000_000 {
				t.Fatalf("ParseDuration(%q) = %v, time.ParseDuration refuses it: %v", s, got, timeErr)
			}
			return
		}
		if err != nil {
			if timeErr == nil && !strings.Contains(err.Error(), "whole number") && !strings.Contains(err.Error(), "out of range") {
				t.Fatalf("ParseDuration(%q): %v; time.ParseDuration gives %v", s, err, want)
			}
			return
		}
		// time.ParseDuration truncates each part; the exact sum is at
		// most one ns per part away, and equal when it names whole ns.
		diff := got - want
		if diff < 0 {
			diff = -diff
		}
		if diff > time.Duration(len(s)) {
			t.Fatalf("ParseDuration(%q) = %v, time.ParseDuration %v", s, got, want)
		}
	})
}

// TestFileError: a file's name is echoed once, shortened, however the OS
// error repeats it.
func TestFileError(t *testing.T) {
	long := strings.Repeat("n", 5000)
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"missing.json", &fs.PathError{Op: "open", Path: "missing.json", Err: syscall.ENOENT}, "missing.json: open: no such file or directory"},
		{long, &fs.PathError{Op: "open", Path: long, Err: syscall.ENAMETOOLONG}, strings.Repeat("n", 64) + "… (5000 characters): open: file name too long"},
		{"a b\n", errors.New("truncated"), `"a b\n": truncated`},
		{"x.json", &fs.PathError{Op: "open", Path: "other", Err: syscall.ENOENT}, "x.json: open other: no such file or directory"},
	} {
		err := options.FileError(tt.name, tt.err)
		checkUsage(t, err, tt.want)
	}
}
