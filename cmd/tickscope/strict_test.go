package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tickscope/tickscope/internal/options"
)

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
	strict(fs)
	strict(fs) // twice changes nothing
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
	strict(fs)
	err := fs.Parse([]string{"--delay", "1.5ns"})
	if err == nil || delay != time.Millisecond {
		t.Errorf("--delay 1.5ns: %v, delay %v (want the default kept)", err, delay)
	}
	if got := flagError(err).Error(); got != `invalid argument "1.5ns" for "--delay" flag: not a whole number of nanoseconds (it lies between 1ns and 2ns); durations are counted in whole ns` {
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
		strict(fs)
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
		err = flagError(err)
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
		strict(fs)
		err := fs.Parse(tt.args)
		if err == nil {
			t.Errorf("%.30q parsed", tt.args)
			continue
		}
		got := flagError(err).Error()
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
	if err := emptyValues(fs); err != nil {
		t.Errorf("no empty string flag: %v", err)
	}
	for _, args := range [][]string{{"--methods", ""}, {"--methods="}, {"--raw", ""}} {
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		err := emptyValues(fs)
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
		harden(root)
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

// checkUsage requires err to be a usage error saying want.
func checkUsage(t *testing.T, err error, want string) {
	t.Helper()
	var usage *options.UsageError
	if !errors.As(err, &usage) {
		t.Fatalf("error %v is not a usage error", err)
	}
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

// TestFormValuesParseAsFlags: a value tickscope ui's forms send is
// parsed by options' Parse functions to what the command line's flag,
// under strict's rules, holds, and refused in the same words.
func TestFormValuesParseAsFlags(t *testing.T) {
	values := []string{
		"0", "1", "-1", "5000", "062021", "0x10", "1_000", "+5", " 5", "", "abc", "1e3", "00", "٥",
		"4294967295", "4294967296", "-2147483649", "2147483648", "99999999999999999999",
		"0.5", ".5", "1.", "-0.25", "1e-1", "NaN", "Inf", "0x1p-1", "1" + strings.Repeat("0", 400),
		"1us", "1.5ns", "0.5ns0.5ns", "2s", "soon", "a\nb", "-5ns", strings.Repeat("z", 1000),
	}
	for _, v := range values {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.SetOutput(new(strings.Builder))
		fs.Uint32("resolution", 0, "")
		fs.Float64("ms", 0, "")
		fs.Int32("dma-latency", 0, "")
		fs.Int("pid", 0, "")
		fs.Duration("slack", 0, "")
		strict(fs)
		flag := func(name string) (string, error) {
			err := fs.Parse([]string{"--" + name, v})
			if err != nil {
				return "", flagError(err)
			}
			return fs.Lookup(name).Value.String(), nil
		}
		same := func(name string, form any, formErr error) {
			t.Helper()
			want, wantErr := flag(name)
			switch {
			case (formErr == nil) != (wantErr == nil):
				t.Errorf("--%s %.40q: the form says %v, the flag %v", name, v, formErr, wantErr)
			case formErr != nil && formErr.Error() != wantErr.Error():
				t.Errorf("--%s %.40q: the form says\n  %q\nthe flag\n  %q", name, v, formErr, wantErr)
			case formErr == nil && options.Value(form) != options.Value(want):
				t.Errorf("--%s %.40q: the form holds %v, the flag %v", name, v, form, want)
			}
		}
		r, err := options.ParseUint32("resolution", v)
		same("resolution", r, err)
		m, err := options.ParseFloat64("ms", v)
		same("ms", m, err)
		d, err := options.ParseInt32("dma-latency", v)
		same("dma-latency", d, err)
		p, err := options.ParseInt("pid", v)
		same("pid", p, err)
		s, err := options.ParseDurationFlag("slack", v)
		same("slack", s, err)
	}
}
