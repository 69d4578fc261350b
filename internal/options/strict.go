package options

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// Strict puts every flag of fs under the rules every command shares, by
// wrapping its value (Harden calls it on every command, so that no flag of
// any command, now or later, misses one):
//   - a flag is given once: pflag lets a second --samples win silently
//     (measure --samples 10 --samples 20 would measure 20); no tickscope
//     flag is repeatable;
//   - an integer flag takes decimal digits only: pflag parses as Go source
//     does, so --pid 062021 would be octal (PID 25617), --samples 0x10
//     16, and 1_000 1000;
//   - a fractional flag (--ms) takes a plain decimal number: no exponent,
//     hex, underscore, Inf or NaN;
//   - a duration flag is a whole number of nanoseconds, parsed exactly
//     (ParseDuration): pflag's own truncates --delay 1.5ns to 1 ns.
//
// The variable a command reads, and the flag's default and help text,
// stay as defined. Calling Strict twice changes nothing.
func Strict(fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		if _, done := f.Value.(*strictValue); done {
			return
		}
		v := &strictValue{inner: f.Value, name: f.Name}
		switch f.Value.Type() {
		case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
			v.syntax = decimalInteger
		case "float32", "float64":
			v.syntax = decimalNumber
		case "duration":
			v.syntax = wholeNanoseconds
			// A zero default keeps the help as pflag prints it (no
			// "(default 0s)").
			if f.DefValue == "0s" {
				f.DefValue = "0"
			}
		}
		f.Value = v
	})
}

// strictValue is a flag's value under Strict's rules.
type strictValue struct {
	inner pflag.Value
	name  string
	// syntax checks a value and returns what inner is given; nil takes
	// the value as typed.
	syntax func(string) (string, error)
	// given is set by the first Set; first is its value.
	given bool
	first string
}

func (v *strictValue) Set(s string) error {
	if v.given {
		return &RepeatedError{Flag: v.name, First: v.first, Second: s, Bool: v.inner.Type() == "bool"}
	}
	value := s
	if v.syntax != nil {
		var err error
		if value, err = v.syntax(s); err != nil {
			return err
		}
	}
	if err := v.inner.Set(value); err != nil {
		return numberError(v.inner.Type(), err)
	}
	v.given, v.first = true, s
	return nil
}

func (v *strictValue) String() string { return v.inner.String() }

// Type is the wrapped value's type name, which the help prints and
// pflag's typed getters (GetInt, GetBool) check.
func (v *strictValue) Type() string { return v.inner.Type() }

// RepeatedError is a flag given a second time. FlagError words it.
type RepeatedError struct {
	Flag, First, Second string
	// Bool flags are named without their values ("--json --json").
	Bool bool
}

func (e *RepeatedError) Error() string {
	if e.Bool && e.First == "true" && e.Second == "true" {
		return fmt.Sprintf("--%s is given twice; give each flag once", e.Flag)
	}
	return fmt.Sprintf("--%s is given twice (%s, then %s); give each flag once", e.Flag, Value(e.First), Value(e.Second))
}

var (
	integerSyntax = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)
	numberSyntax  = regexp.MustCompile(`^-?((0|[1-9][0-9]*)(\.[0-9]*)?|\.[0-9]+)$`)
)

// NotDecimalError is an integer or fractional value written other than in
// plain decimal digits.
type NotDecimalError struct{ Fraction bool }

func (e *NotDecimalError) Error() string {
	if e.Fraction {
		return "not a decimal number: digits 0-9, an optional minus sign and decimal point, such as 0.5 (no leading zero, exponent, hex, _, Inf or NaN)"
	}
	return "not a decimal integer: digits 0-9 and an optional minus sign (no leading zero, 0x, 0o, 0b, + or _)"
}

func decimalInteger(s string) (string, error) {
	if !integerSyntax.MatchString(s) {
		return "", &NotDecimalError{}
	}
	return s, nil
}

func decimalNumber(s string) (string, error) {
	if !numberSyntax.MatchString(s) {
		return "", &NotDecimalError{Fraction: true}
	}
	return s, nil
}

// wholeNanoseconds parses a duration exactly (ParseDuration) and gives it
// as a whole number of ns, which every duration parser reads exactly:
// "0.5ns0.5ns" is 1 ns, where time.ParseDuration truncates each part and
// says 0.
func wholeNanoseconds(s string) (string, error) {
	ns, err := ParseDuration(s)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%dns", ns), nil
}

// numberError words strconv's error for a decimal value pflag could not
// store ("strconv.ParseInt: parsing ...: value out of range") as what the
// flag's type allows.
func numberError(typ string, err error) error {
	var num *strconv.NumError
	if !errors.As(err, &num) {
		return err
	}
	unsigned := strings.HasPrefix(typ, "uint")
	switch {
	case unsigned && strings.HasPrefix(num.Num, "-"):
		return errors.New("negative; it takes 0 or more")
	case errors.Is(num.Err, strconv.ErrRange):
		if bounds, ok := typeBounds[typ]; ok {
			return fmt.Errorf("out of range: %s", bounds)
		}
		return errors.New("out of range")
	}
	return err
}

// typeBounds are what each integer type can hold.
var typeBounds = map[string]string{
	"int": fmt.Sprintf("%d..%d", math.MinInt, math.MaxInt), "int64": fmt.Sprintf("%d..%d", math.MinInt64, math.MaxInt64),
	"int32": fmt.Sprintf("%d..%d", math.MinInt32, math.MaxInt32), "int16": fmt.Sprintf("%d..%d", math.MinInt16, math.MaxInt16),
	"int8": fmt.Sprintf("%d..%d", math.MinInt8, math.MaxInt8),
	"uint": fmt.Sprintf("0..%d", uint64(math.MaxUint)), "uint64": fmt.Sprintf("0..%d", uint64(math.MaxUint64)),
	"uint32": fmt.Sprintf("0..%d", math.MaxUint32), "uint16": fmt.Sprintf("0..%d", math.MaxUint16), "uint8": fmt.Sprintf("0..%d", math.MaxUint8),
}
