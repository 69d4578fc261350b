// Package printable is the one rule for text that comes from outside
// tickscope (a file, another process, the OS) and may reach a terminal:
// a character that does not print (a C0 or C1 control, DEL, a format
// character such as a bidirectional override, a line or paragraph
// separator, a surrogate or unassigned code point) or a byte of invalid
// UTF-8 is never written as it is, because a terminal acts on it: ESC ]
// 52 writes the clipboard, CSI (ESC [ or U+009B) moves the cursor and
// erases lines, CR and LF forge lines. Text keeps its spaces and every
// character that prints; the others are written as Go escapes (\x1b,
// \u009b, \n) in text, and as \u escapes in JSON, where they mean the
// same string.
package printable

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Rune reports whether r prints as itself: a space or a graphic character
// (unicode.IsPrint). C0 and C1 controls, DEL and the other characters
// that do not print are not.
func Rune(r rune) bool { return r == ' ' || unicode.IsPrint(r) }

// String reports whether every character of s prints as itself: valid
// UTF-8 of which Rune holds for each character.
func String(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 || !Rune(r) {
			return false
		}
		i += size
	}
	return true
}

// Line returns s as one line of printable text: each character that does
// not print, and each byte of invalid UTF-8, written as its Go escape (a
// newline as \n, ESC as \x1b, U+009B as \u009b, a bad byte as \xff).
// Printable text is returned as it is.
func Line(s string) string {
	if String(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case !Rune(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}

// JSON returns encoded JSON (as encoding/json writes it: valid UTF-8,
// every character below U+0020 already escaped) with every other
// character that does not print (DEL, C1 controls, format characters...)
// written as a \u escape: the same JSON value, safe on a terminal. Such
// characters occur only inside strings, where the escape means the same
// character. JSON that is already printable is returned as it is.
func JSON(data []byte) []byte {
	clean := true
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 || !Rune(r) && r != '\n' && r != '\t' && r != '\r' {
			clean = false
			break
		}
		i += size
	}
	if clean {
		return data
	}
	out := make([]byte, 0, len(data)+32)
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			// Not from encoding/json, which writes valid UTF-8: the
			// replacement character stands for the bad byte.
			out = appendU(out, utf8.RuneError)
		case r == '\n' || r == '\t' || r == '\r' || Rune(r):
			out = append(out, data[i:i+size]...)
		default:
			out = appendU(out, r)
		}
		i += size
	}
	return out
}

// appendU appends r as JSON's \u escape: one for the Basic Multilingual
// Plane, a UTF-16 surrogate pair above it.
func appendU(out []byte, r rune) []byte {
	if r > 0xffff {
		r -= 0x10000
		out = appendU(out, 0xd800+(r>>10))
		return appendU(out, 0xdc00+(r&0x3ff))
	}
	const digits = "0123456789abcdef"
	return append(out, '\\', 'u', digits[r>>12&0xf], digits[r>>8&0xf], digits[r>>4&0xf], digits[r&0xf])
}
