package options_test

import (
	"strings"
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

func TestStrictDurationsKeepTheHelp(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	var delay, slack time.Duration
	fs.DurationVar(&delay, "delay", time.Millisecond, "the delay")
	fs.DurationVar(&slack, "slack", 0, "the slack")
	before := fs.FlagUsages()
	options.StrictDurations(fs)
	options.StrictDurations(fs) // twice changes nothing
	if after := fs.FlagUsages(); after != before {
		t.Errorf("help changed:\n%s\nwas\n%s", after, before)
	}
	if err := fs.Parse([]string{"--delay", "1.5us", "--slack", "0.5ns0.5ns"}); err != nil || delay != 1500 || slack != 1 {
		t.Errorf("parsed %v, %v: %v", delay, slack, err)
	}
	err := fs.Parse([]string{"--delay", "1.5ns"})
	if err == nil || delay != 1500 {
		t.Errorf("--delay 1.5ns: %v, delay %v", err, delay)
	}
	if got := options.FlagError(err).Error(); got != `invalid argument "1.5ns" for "--delay" flag: not a whole number of nanoseconds (it lies between 1ns and 2ns); durations are counted in whole ns` {
		t.Errorf("FlagError = %q", got)
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
		{[]string{"--count", "x\ny"}, `invalid argument "x\ny" for "--count" flag: strconv.ParseInt: parsing "x\ny": invalid syntax`},
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
		options.StrictDurations(fs)
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
