package options

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"unicode"
	"unicode/utf8"

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
// from its text (ParserError).
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

// ParserError is the usage error of a command-line parser's error of a
// kind its caller does not word itself: its text, cut to a few lines'
// worth and made one line (its values cannot be told apart from it).
func ParserError(err error) error {
	msg, _ := shortenTo(err.Error(), maxMessage)
	return &UsageError{Msg: OneLine(msg)}
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
