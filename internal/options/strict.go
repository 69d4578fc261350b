package options

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The rules every flag of every command shares, as pure functions of the
// text typed (cmd/tickscope applies them to each flag as it is parsed;
// tickscope ui's forms, whose values arrive as text, parse with the
// Parse functions below, so that a value is refused in the same words):
//   - a flag is given once (RepeatedError): no tickscope flag is
//     repeatable, and a second --samples would otherwise win silently;
//   - an integer takes decimal digits only (Syntax): parsed as Go source
//     is, --pid 062021 would be octal (PID 25617), --samples 0x10 16, and
//     1_000 1000;
//   - a fractional value (--ms) takes a plain decimal number: no exponent,
//     hex, underscore, Inf or NaN;
//   - a duration is a whole number of nanoseconds, parsed exactly
//     (ParseDuration): time.ParseDuration truncates 1.5ns to 1 ns.

// RepeatedError is a flag given a second time.
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

// Syntax checks s, a value of a flag whose type is typ (the command-line
// parser's type names: "int", "uint32", "float64", "duration", ...), by
// the rules above, and returns the text that type's parser is to be
// given: s itself, or for a duration its whole number of ns ("1500ns"),
// which every duration parser reads exactly. A type without a rule of its
// own (a string, a bool) takes s as typed.
func Syntax(typ, s string) (string, error) {
	switch typ {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		if !integerSyntax.MatchString(s) {
			return "", &NotDecimalError{}
		}
	case "float32", "float64":
		if !numberSyntax.MatchString(s) {
			return "", &NotDecimalError{Fraction: true}
		}
	case "duration":
		// "0.5ns0.5ns" is 1 ns, where time.ParseDuration truncates each
		// part and says 0.
		ns, err := ParseDuration(s)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%dns", ns), nil
	}
	return s, nil
}

// NumberError words strconv's error for a decimal value of type typ that
// could not be stored ("strconv.ParseInt: parsing ...: value out of
// range") as what the type allows. Any other error is returned as it is.
func NumberError(typ string, err error) error {
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

// InvalidValue is the usage error of a value its flag's type refuses
// (err, from Syntax, NumberError or the type's parser): the parser's own
// wording, which names the flag and the value, with the value always
// quoted and shortened.
func InvalidValue(flag, value string, err error) error {
	short, n := shorten(value)
	msg := fmt.Sprintf("invalid argument %s for \"--%s\" flag: %v", strconv.Quote(short), flag, err)
	if n > MaxEcho {
		msg = fmt.Sprintf("invalid argument %s (%d characters) for \"--%s\" flag: %v", strconv.Quote(short), n, flag, err)
	}
	return &UsageError{Msg: OneLine(msg), Bound: &Bound{Option: flag, Value: value, Allowed: err.Error()}}
}

// EmptyValue is the usage error of a text flag given an empty value:
// leaving a flag out is how to ask for its default, and "" taken as
// given once ran every method (--methods ""). usage is the flag's help.
func EmptyValue(flag, usage string) error {
	return BadFlag(flag, "", "empty; it takes %s; leave it out for its default", usage)
}

// parse parses s, a value of flag, whose type is typ, with conv (as the
// command-line parser parses that type), under Syntax's rules.
func parse[T any](flag, typ, s string, conv func(string) (T, error)) (T, error) {
	value, err := Syntax(typ, s)
	if err == nil {
		var v T
		if v, err = conv(value); err == nil {
			return v, nil
		}
		err = NumberError(typ, err)
	}
	var zero T
	return zero, InvalidValue(flag, s, err)
}

// ParseUint32 parses s as the value of flag, a uint32 flag
// (--resolution), as the command line does.
func ParseUint32(flag, s string) (uint32, error) {
	return parse(flag, "uint32", s, func(s string) (uint32, error) {
		v, err := strconv.ParseUint(s, 0, 32)
		return uint32(v), err
	})
}

// ParseInt32 parses s as the value of flag, an int32 flag
// (--dma-latency), as the command line does.
func ParseInt32(flag, s string) (int32, error) {
	return parse(flag, "int32", s, func(s string) (int32, error) {
		v, err := strconv.ParseInt(s, 0, 32)
		return int32(v), err
	})
}

// ParseInt parses s as the value of flag, an int flag (--pid), as the
// command line does.
func ParseInt(flag, s string) (int, error) {
	return parse(flag, "int", s, func(s string) (int, error) {
		v, err := strconv.ParseInt(s, 0, 64)
		return int(v), err
	})
}

// ParseFloat64 parses s as the value of flag, a fractional flag (--ms),
// as the command line does.
func ParseFloat64(flag, s string) (float64, error) {
	return parse(flag, "float64", s, func(s string) (float64, error) { return strconv.ParseFloat(s, 64) })
}

// ParseDurationFlag parses s as the value of flag, a duration flag
// (--slack), as the command line does.
func ParseDurationFlag(flag, s string) (time.Duration, error) {
	return parse(flag, "duration", s, time.ParseDuration)
}
