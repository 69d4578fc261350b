package main

import (
	"errors"

	"github.com/spf13/pflag"

	"github.com/tickscope/tickscope/internal/options"
)

// strict puts every flag of fs under the rules every command shares
// (options.Syntax, options.RepeatedError), by wrapping its value (harden
// calls it on every command, so that no flag of any command, now or
// later, misses one). The variable a command reads, and the flag's
// default and help text, stay as defined. Calling strict twice changes
// nothing.
func strict(fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		if _, done := f.Value.(*strictValue); done {
			return
		}
		// A zero duration default keeps the help as pflag prints it (no
		// "(default 0s)").
		if f.Value.Type() == "duration" && f.DefValue == "0s" {
			f.DefValue = "0"
		}
		f.Value = &strictValue{inner: f.Value, name: f.Name}
	})
}

// strictValue is a flag's value under strict's rules.
type strictValue struct {
	inner pflag.Value
	name  string
	// given is set by the first Set; first is its value.
	given bool
	first string
}

func (v *strictValue) Set(s string) error {
	if v.given {
		return &options.RepeatedError{Flag: v.name, First: v.first, Second: s, Bool: v.inner.Type() == "bool"}
	}
	value, err := options.Syntax(v.inner.Type(), s)
	if err != nil {
		return err
	}
	if err := v.inner.Set(value); err != nil {
		return options.NumberError(v.inner.Type(), err)
	}
	v.given, v.first = true, s
	return nil
}

func (v *strictValue) String() string { return v.inner.String() }

// Type is the wrapped value's type name, which the help prints and
// pflag's typed getters (GetInt, GetBool) check.
func (v *strictValue) Type() string { return v.inner.Type() }

// flagError turns an error of the command-line parser (pflag, through
// cobra's flag error function) into a usage error, with the value and the
// flag's name echoed as options.Value does.
func flagError(err error) error {
	var (
		invalid  *pflag.InvalidValueError
		notExist *pflag.NotExistError
		required *pflag.ValueRequiredError
		syntax   *pflag.InvalidSyntaxError
	)
	var repeated *options.RepeatedError
	switch {
	case errors.As(err, &repeated):
		return &options.UsageError{Msg: options.OneLine(repeated.Error())}
	case errors.As(err, &invalid):
		return options.InvalidValue(invalid.GetFlag().Name, invalid.GetValue(), invalid.Unwrap())
	case errors.As(err, &notExist) && notExist.GetSpecifiedShortnames() == "":
		return &options.UsageError{Msg: "unknown flag: " + options.Value("--"+notExist.GetSpecifiedName())}
	case errors.As(err, &required) && required.GetSpecifiedShortnames() == "":
		return &options.UsageError{Msg: "flag needs an argument: " + options.Value("--"+required.GetSpecifiedName())}
	case errors.As(err, &syntax):
		return &options.UsageError{Msg: "bad flag syntax: " + options.Value(syntax.GetSpecifiedFlag())}
	}
	return options.ParserError(err)
}

// emptyValues refuses a string flag given an empty value
// (options.EmptyValue). The root command calls it for every command
// before the command runs.
func emptyValues(fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if err == nil && f.Changed && f.Value.Type() == "string" && f.Value.String() == "" {
			err = options.EmptyValue(f.Name, f.Usage)
		}
	})
	return err
}

// givenValue is a flag's value that records, the first time it is set,
// that the flag was given: how the typed options below cmd/tickscope
// learn which flags were given without a command line.
type givenValue struct {
	pflag.Value
	given *bool
}

func (v givenValue) Set(s string) error {
	if err := v.Value.Set(s); err != nil {
		return err
	}
	*v.given = true
	return nil
}

// markGiven makes the flag name of fs set *given when it is given.
func markGiven(fs *pflag.FlagSet, name string, given *bool) {
	f := fs.Lookup(name)
	f.Value = givenValue{Value: f.Value, given: given}
}
