package options

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/tickscope/tickscope/internal/printable"
)

// MaxEcho is the most characters of a value a message repeats: a value of
// 100,000 characters is the user's own, and one line of it is enough to
// recognise it.
const MaxEcho = 64

// Value is how a message echoes a value the user gave: as it was typed
// when that reads unambiguously, quoted (Go syntax, so one line) when it is
// empty or holds a space, a control character, a character that does not
// print or invalid UTF-8, and shortened to MaxEcho characters with "…" and
// its length when longer.
func Value(v any) string {
	s := fmt.Sprint(v)
	short, n := shorten(s)
	if needsQuotes(s) {
		short = strconv.Quote(short)
	}
	if n > MaxEcho {
		short += fmt.Sprintf(" (%d characters)", n)
	}
	return short
}

// maxMessage bounds a whole message whose values cannot be told apart
// from its text (a parser's error of a kind FlagError does not know).
const maxMessage = 4 * MaxEcho

// shorten cuts s to MaxEcho characters, marking the cut with "…", and
// returns its length in characters.
func shorten(s string) (string, int) { return shortenTo(s, MaxEcho) }

func shortenTo(s string, most int) (string, int) {
	n := utf8.RuneCountInString(s)
	if n <= most {
		return s, n
	}
	cut := 0
	for i := 0; i < most; i++ {
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
	}
	return s[:cut] + "…", n
}

func needsQuotes(s string) bool {
	if s == "" || !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if r == ' ' || !unicode.IsPrint(r) {
			return true
		}
	}
	return false
}

// OneLine makes a message one line of printable text (printable.Message):
// each control character, character that does not print, and byte of
// invalid UTF-8 is written as its Go escape (a newline as \n), so that no
// value can split tickscope's one-line errors or reach the terminal as a
// control sequence. It keeps printable text as it is, so that a message
// made one line already, and the values Value quoted in it, read the same
// after it again.
func OneLine(msg string) string { return printable.Message(msg) }

// FlagError turns an error of the command-line parser (pflag, through
// cobra's flag error function) into a usage error, with the value and the
// flag's name echoed as Value does.
func FlagError(err error) error {
	var (
		invalid  *pflag.InvalidValueError
		notExist *pflag.NotExistError
		required *pflag.ValueRequiredError
		syntax   *pflag.InvalidSyntaxError
	)
	var repeated *RepeatedError
	switch {
	case errors.As(err, &repeated):
		return &UsageError{OneLine(repeated.Error())}
	case errors.As(err, &invalid):
		// pflag's own wording, which names the flag and the value, with
		// the value always quoted and shortened.
		short, n := shorten(invalid.GetValue())
		msg := fmt.Sprintf("invalid argument %s for \"--%s\" flag: %v", strconv.Quote(short), invalid.GetFlag().Name, invalid.Unwrap())
		if n > MaxEcho {
			msg = fmt.Sprintf("invalid argument %s (%d characters) for \"--%s\" flag: %v", strconv.Quote(short), n, invalid.GetFlag().Name, invalid.Unwrap())
		}
		return &UsageError{OneLine(msg)}
	case errors.As(err, &notExist) && notExist.GetSpecifiedShortnames() == "":
		return &UsageError{"unknown flag: " + Value("--"+notExist.GetSpecifiedName())}
	case errors.As(err, &required) && required.GetSpecifiedShortnames() == "":
		return &UsageError{"flag needs an argument: " + Value("--"+required.GetSpecifiedName())}
	case errors.As(err, &syntax):
		return &UsageError{"bad flag syntax: " + Value(syntax.GetSpecifiedFlag())}
	}
	msg, _ := shortenTo(err.Error(), maxMessage)
	return &UsageError{OneLine(msg)}
}

// EmptyValues refuses a string flag given an empty value: pflag takes
// --methods "" as given, and the commands took "" as their default, so
// that --methods "" ran every method. Leaving a flag out is how to ask for
// its default. The root command calls it for every command before the
// command runs.
func EmptyValues(fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if err == nil && f.Changed && f.Value.Type() == "string" && f.Value.String() == "" {
			err = BadFlag(f.Name, "", "empty; it takes %s; leave it out for its default", f.Usage)
		}
	})
	return err
}

// FileError is a usage error about a file the user named (analyze FILE):
// the name echoed once, as Value does, then what is wrong with it. An OS
// error that repeats the name ("open NAME: no such file or directory") is
// cut to its call and cause, so that a long name is not echoed twice,
// whole.
func FileError(name string, err error) error {
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) && pathErr.Path == name {
		return Usagef("%s: %s: %v", Value(name), pathErr.Op, pathErr.Err)
	}
	return Usagef("%s: %v", Value(name), err)
}
