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

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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

func TestStrictKeepsTheHelp(t *testing.T) {
	var delay, slack time.Duration
	var samples int
	var ms float64
	var asJSON bool
	flags := func() *pflag.FlagSet {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.DurationVar(&delay, "delay", time.Millisecond, "the delay")
		fs.DurationVar(&slack, "slack", 0, "the slack")
		fs.IntVar(&samples, "samples", 1000, "the samples")
		fs.Float64Var(&ms, "ms", 0, "the period")
		fs.BoolVar(&asJSON, "json", false, "as JSON")
		return fs
	}
	fs := flags()
	before := fs.FlagUsages()
	options.Strict(fs)
	options.Strict(fs) // twice changes nothing
	if after := fs.FlagUsages(); after != before {
		t.Errorf("help changed:\n%s\nwas\n%s", after, before)
	}
	if err := fs.Parse([]string{"--delay", "1.5us", "--slack", "0.5ns0.5ns", "--samples", "-0", "--ms", "0.5", "--json"}); err != nil || delay != 1500 || slack != 1 || samples != 0 || ms != 0.5 || !asJSON {
		t.Errorf("parsed %v, %v, %v, %v, %v: %v", delay, slack, samples, ms, asJSON, err)
	}
	if v, err := fs.GetInt("samples"); v != 0 || err != nil {
		t.Errorf("GetInt through the wrapper: %v, %v", v, err)
	}
	fs = flags()
	options.Strict(fs)
	err := fs.Parse([]string{"--delay", "1.5ns"})
	if err == nil || delay != time.Millisecond {
		t.Errorf("--delay 1.5ns: %v, delay %v (want the default kept)", err, delay)
	}
	if got := options.FlagError(err).Error(); got != `invalid argument "1.5ns" for "--delay" flag: not a whole number of nanoseconds (it lies between 1ns and 2ns); durations are counted in whole ns` {
		t.Errorf("FlagError = %q", got)
	}
}

// TestStrict: a flag given twice, and a number written other than in
// plain decimal, are refused in one line naming the flag, and the
// variable keeps its first value.
func TestStrict(t *testing.T) {
	const integer = "not a decimal integer: digits 0-9 and an optional minus sign (no leading zero, 0x, 0o, 0b, + or _)"
	const number = "not a decimal number: digits 0-9, an optional minus sign and decimal point, such as 0.5 (no leading zero, exponent, hex, _, Inf or NaN)"
	long := strings.Repeat("9", 5000)
	for _, tt := range []struct {
		args []string
		want string // "" for accepted
	}{
		{[]string{"--samples", "10", "--samples", "20"}, "--samples is given twice (10, then 20); give each flag once"},
		{[]string{"--samples=10", "--samples=10"}, "--samples is given twice (10, then 10); give each flag once"},
		{[]string{"--raw", "a", "--raw", "b"}, "--raw is given twice (a, then b); give each flag once"},
		{[]string{"--raw", "a", "--raw", "x\ny"}, `--raw is given twice (a, then "x\ny"); give each flag once`},
		{[]string{"--raw", "a", "--raw", long}, "--raw is given twice (a, then " + strings.Repeat("9", 64) + "… (5000 characters)); give each flag once"},
		{[]string{"--json", "--json"}, "--json is given twice; give each flag once"},
		{[]string{"--json=false", "--json"}, "--json is given twice (false, then true); give each flag once"},
		{[]string{"--delay", "1ms", "--delay", "2ms"}, "--delay is given twice (1ms, then 2ms); give each flag once"},
		{[]string{"--ms", "0.5", "--ms", "1"}, "--ms is given twice (0.5, then 1); give each flag once"},
		{[]string{"--pid", "062021"}, `invalid argument "062021" for "--pid" flag: ` + integer},
		{[]string{"--pid", "0x10"}, `invalid argument "0x10" for "--pid" flag: ` + integer},
		{[]string{"--pid", "0X10"}, `invalid argument "0X10" for "--pid" flag: ` + integer},
		{[]string{"--pid", "0o17"}, `invalid argument "0o17" for "--pid" flag: ` + integer},
		{[]string{"--pid", "0b101"}, `invalid argument "0b101" for "--pid" flag: ` + integer},
		{[]string{"--pid", "1_000"}, `invalid argument "1_000" for "--pid" flag: ` + integer},
		{[]string{"--pid", "+5"}, `invalid argument "+5" for "--pid" flag: ` + integer},
		{[]string{"--pid", " 5"}, `invalid argument " 5" for "--pid" flag: ` + integer},
		{[]string{"--pid", "5 "}, `invalid argument "5 " for "--pid" flag: ` + integer},
		{[]string{"--pid", "٥"}, `invalid argument "٥" for "--pid" flag: ` + integer},
		{[]string{"--pid", "1e3"}, `invalid argument "1e3" for "--pid" flag: ` + integer},
		{[]string{"--pid", "00"}, `invalid argument "00" for "--pid" flag: ` + integer},
		{[]string{"--dma-latency", "010"}, `invalid argument "010" for "--dma-latency" flag: ` + integer},
		{[]string{"--from", "0x10"}, `invalid argument "0x10" for "--from" flag: ` + integer},
		{[]string{"--from", "-1"}, `invalid argument "-1" for "--from" flag: negative; it takes 0 or more`},
		{[]string{"--from", "4294967296"}, `invalid argument "4294967296" for "--from" flag: out of range: 0..4294967295`},
		{[]string{"--dma-latency", "-2147483649"}, `invalid argument "-2147483649" for "--dma-latency" flag: out of range: -2147483648..2147483647`},
		{[]string{"--pid", "99999999999999999999"}, `invalid argument "99999999999999999999" for "--pid" flag: out of range: -9223372036854775808..9223372036854775807`},
		{[]string{"--seed", "18446744073709551616"}, `invalid argument "18446744073709551616" for "--seed" flag: out of range: 0..18446744073709551615`},
		{[]string{"--ms", "1" + strings.Repeat("0", 400)}, `invalid argument "1` + strings.Repeat("0", 63) + `…" (401 characters) for "--ms" flag: out of range`},
		{[]string{"--seed", "0b1"}, `invalid argument "0b1" for "--seed" flag: ` + integer},
		{[]string{"--ms", "0x1p-1"}, `invalid argument "0x1p-1" for "--ms" flag: ` + number},
		{[]string{"--ms", "1e-1"}, `invalid argument "1e-1" for "--ms" flag: ` + number},
		{[]string{"--ms", "NaN"}, `invalid argument "NaN" for "--ms" flag: ` + number},
		{[]string{"--ms", "Inf"}, `invalid argument "Inf" for "--ms" flag: ` + number},
		{[]string{"--ms", "0_5"}, `invalid argument "0_5" for "--ms" flag: ` + number},
		{[]string{"--ms", "05"}, `invalid argument "05" for "--ms" flag: ` + number},
		{[]string{"--ms", "."}, `invalid argument "." for "--ms" flag: ` + number},
		{[]string{"--pid", "0"}, ""},
		{[]string{"--pid", "62021"}, ""},
		{[]string{"--dma-latency", "-1"}, ""},
		{[]string{"--from", "5000"}, ""},
		{[]string{"--seed", "18446744073709551615"}, ""},
		{[]string{"--ms", "0.5"}, ""},
		{[]string{"--ms", ".5"}, ""},
		{[]string{"--ms", "1."}, ""},
		{[]string{"--ms", "-0.25"}, ""},
		{[]string{"--ms", "10"}, ""},
	} {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.SetOutput(new(strings.Builder))
		samples := fs.Int("samples", 1000, "")
		fs.String("raw", "", "")
		fs.Bool("json", false, "")
		fs.Duration("delay", time.Millisecond, "")
		fs.Float64("ms", 0, "")
		fs.Int("pid", 0, "")
		fs.Int32("dma-latency", 0, "")
		fs.Uint32("from", 0, "")
		fs.Uint64("seed", 1, "")
		options.Strict(fs)
		err := fs.Parse(tt.args)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%q: %v", tt.args, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%q parsed", tt.args)
			continue
		}
		err = options.FlagError(err)
		checkUsage(t, err, tt.want)
		if tt.args[0] == "--samples" && *samples != 10 {
			t.Errorf("%q: --samples is %d, want the first value, 10", tt.args, *samples)
		}
	}
}

func TestFlagError(t *testing.T) {
	long := strings.Repeat("z", 1000)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--delay", "soon"}, `invalid argument "soon" for "--delay" flag: not a duration: a number and a unit (ns, us, ms, s, m, h), such as 250us or 1.5ms`},
		{[]string{"--delay", "a\nb"}, `invalid argument "a\nb" for "--delay" flag: not a duration`},
		{[]string{"--delay", long}, `invalid argument "` + strings.Repeat("z", 64) + `…" (1000 characters) for "--delay" flag`},
		{[]string{"--count", "x\ny"}, `invalid argument "x\ny" for "--count" flag: not a decimal integer`},
		{[]string{"--fro\nb"}, `unknown flag: "--fro\nb"`},
		{[]string{"--" + long}, `unknown flag: --` + strings.Repeat("z", 62) + `… (1002 characters)`},
		{[]string{"--frobnicate"}, `unknown flag: --frobnicate`},
		{[]string{"--delay"}, `flag needs an argument: --delay`},
		{[]string{"-q\n"}, `unknown shorthand flag: 'q' in -q\n`},
	} {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.SetOutput(new(strings.Builder))
		fs.Duration("delay", 0, "")
		fs.Int("count", 0, "")
		options.Strict(fs)
		err := fs.Parse(tt.args)
		if err == nil {
			t.Errorf("%.30q parsed", tt.args)
			continue
		}
		got := options.FlagError(err).Error()
		if !strings.HasPrefix(got, tt.want) || strings.ContainsAny(got, "\n\r") {
			t.Errorf("FlagError(%.40q) = %.200q, want the prefix %.200q", tt.args, got, tt.want)
		}
	}
}

func TestEmptyValues(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.String("methods", "", "comma-separated methods (default: all on this OS)")
	fs.String("raw", "", "write every sample to this file")
	fs.Int("samples", 0, "")
	if err := fs.Parse([]string{"--samples", "0", "--raw", "x"}); err != nil {
		t.Fatal(err)
	}
	if err := options.EmptyValues(fs); err != nil {
		t.Errorf("no empty string flag: %v", err)
	}
	for _, args := range [][]string{{"--methods", ""}, {"--methods="}, {"--raw", ""}} {
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		err := options.EmptyValues(fs)
		checkUsage(t, err, err.Error())
		if !strings.HasPrefix(err.Error(), "--"+strings.Trim(args[0], "-=")+` "": empty; it takes `) {
			t.Errorf("%q: %v", args, err)
		}
		fs = pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.String("methods", "", "comma-separated methods")
		fs.String("raw", "", "a file")
	}
}

// TestHarden: the rules reach every command of a tree, those added under
// subcommands included.
func TestHarden(t *testing.T) {
	build := func() *cobra.Command {
		root := &cobra.Command{Use: "tool", SilenceErrors: true, SilenceUsage: true, RunE: func(*cobra.Command, []string) error { return nil }}
		var d time.Duration
		var s string
		sub := &cobra.Command{Use: "sub", RunE: func(*cobra.Command, []string) error { return nil }}
		sub.Flags().DurationVar(&d, "for", 0, "how long")
		sub.Flags().StringVar(&s, "name", "", "a name")
		group := &cobra.Command{Use: "group"}
		leaf := &cobra.Command{Use: "leaf", RunE: func(*cobra.Command, []string) error { return nil }}
		leaf.Flags().DurationVar(&d, "step", time.Millisecond, "the step")
		group.AddCommand(leaf)
		root.AddCommand(sub, group)
		// Before Harden: cobra's completion command takes its output when
		// it is added.
		root.SetOut(new(strings.Builder))
		root.SetErr(new(strings.Builder))
		options.Harden(root)
		return root
	}
	for _, tt := range []struct {
		args []string
		want string // "" for success
	}{
		{[]string{"sub", "--for", "1ms"}, ""},
		{[]string{"sub", "--for", "1.5ns"}, `invalid argument "1.5ns" for "--for" flag: not a whole number`},
		{[]string{"sub", "--for", "1ms", "--for=2ms"}, `--for is given twice (1ms, then 2ms); give each flag once`},
		{[]string{"group", "leaf", "--step", "1ms", "--step", "1ms"}, `--step is given twice`},
		{[]string{"group", "leaf", "--step", "0.1ns"}, `invalid argument "0.1ns" for "--step" flag: not a whole number`},
		{[]string{"sub", "--name", ""}, `--name "": empty; it takes a name; leave it out for its default`},
		{[]string{"sub", "--nope\n"}, `unknown flag: "--nope\n"`},
		{[]string{"bogus\ncommand"}, `unknown command "bogus\ncommand" for "tool"; the commands are completion, group, sub`},
		{[]string{"completion", "tcsh"}, `completion "tcsh": the shells offered are bash, fish, powershell, zsh`},
		{[]string{"completion", "bash"}, ""},
		{[]string{"completion"}, ""},
	} {
		root := build()
		root.SetArgs(tt.args)
		err := root.Execute()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%q: %v", tt.args, err)
		case tt.want != "":
			checkUsage(t, err, tt.want[:0]+errText(err))
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("%q: %v, want %q", tt.args, err, tt.want)
			}
		}
	}
}

func errText(err error) string {
	if err == nil {
		return "(no error)"
	}
	return err.Error()
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
