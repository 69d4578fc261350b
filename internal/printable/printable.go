// Package printable is the one rule for text that comes from outside
// tickscope (a file, another process, the OS) and may reach a terminal:
// a character that does not print (a C0 or C1 control, DEL, a format
// character such as a bidirectional override, a line or paragraph
// separator, a surrogate or unassigned code point) or a byte of invalid
// UTF-8 is never written as it is, because a terminal acts on it: ESC ]
// 52 writes the clipboard, CSI (ESC [ or U+009B) moves the cursor and
// erases lines, CR and LF forge lines. Text keeps its spaces and every
// character that prints; the others are written as escapes (\x1b,
// \u009b) in text, and as \u escapes in JSON, where they mean the same
// string. Data carries the text as it came; it is escaped where it is
// shown: a value with Line, whose form tells any two values apart, a
// message composed of such values with Message, and JSON with JSON.
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

// Line returns s, a value from outside, as one line of printable text
// that says exactly what s is: two different strings never give the same
// line. Plain text, which prints (String) and holds no backslash that
// starts an escape Line writes (hexEscape: \x1b, \xff, \u009b), is
// returned as it is, so that a path such as C:\Users\bob\x64 or
// \\server\share reads as typed. Any other text is escaped: each character that does not
// print as \xHH (below U+0080: ESC as \x1b, a newline as \x0a), \uHHHH or
// \UHHHHHHHH (U+009B as \u009b), each byte of invalid UTF-8 as \xHH (\xff),
// and each backslash as \\. Escaped text always holds a hex escape and
// plain text never does, and each form reads back one way: the name
// lit\x1b typed as it is shows as lit\\x1b, and lit followed by ESC as
// lit\x1b.
//
// Line is not idempotent (no injective escape can be): apply it once, to
// the value itself; text that already holds escaped values is a message
// (Message).
func Line(s string) string {
	if String(s) && !hexEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteString(`\x`)
			b.WriteString(hex(uint32(s[i]), 2))
		case r == '\\':
			b.WriteString(`\\`)
		case Rune(r):
			b.WriteString(s[i : i+size])
		case r < 0x80:
			b.WriteString(`\x`)
			b.WriteString(hex(uint32(r), 2))
		case r <= 0xffff:
			b.WriteString(`\u`)
			b.WriteString(hex(uint32(r), 4))
		default:
			b.WriteString(`\U`)
			b.WriteString(hex(uint32(r), 8))
		}
		i += size
	}
	return b.String()
}

// Unline is Line's inverse: the string s for which Line(s) is line, ok
// false when no string gives line (then line is returned as it is). Plain
// text is itself (C:\Users\bob\x64 included); escaped text reads \\ as a
// backslash, \xHH as a byte, \uHHHH and \UHHHHHHHH as a character. As
// Line never gives two strings the same line, the string line's escapes
// decode to, if Line gives line for it, is the one, and else line itself
// if it is plain. A reader of what Line wrote (a file's names) takes its
// strings back with it, and refuses those Line does not write.
func Unline(line string) (string, bool) {
	if out, ok := unescape(line); ok && Line(out) == line {
		return out, true
	}
	return line, Line(line) == line
}

// unescape decodes the escapes Line writes; ok is false at a backslash
// that starts none.
func unescape(line string) (string, bool) {
	if !strings.Contains(line, `\`) {
		return line, true
	}
	var b strings.Builder
	for i := 0; i < len(line); {
		c := line[i]
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 == len(line) {
			return "", false
		}
		n := 0
		switch line[i+1] {
		case '\\':
			b.WriteByte('\\')
			i += 2
			continue
		case 'x':
			n = 2
		case 'u':
			n = 4
		case 'U':
			n = 8
		}
		if n == 0 || i+2+n > len(line) {
			return "", false
		}
		v, ok := hexValue(line[i+2 : i+2+n])
		switch {
		case !ok, n > 2 && v > utf8.MaxRune:
			return "", false
		case n == 2:
			b.WriteByte(byte(v))
		default:
			b.WriteRune(rune(v))
		}
		i += 2 + n
	}
	return b.String(), true
}

// hexEscape reports whether s holds a backslash followed by what Line
// writes after one for a character or byte it escapes: x and 2 hex digits
// of a control or a byte above U+007E (\x1b, \xff; not \x64), u and 4 or
// U and 8 of a character that does not print (\u009b; not \uface).
func hexEscape(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		n := 0
		switch s[i+1] {
		case 'x':
			n = 2
		case 'u':
			n = 4
		case 'U':
			n = 8
		}
		if n == 0 || i+2+n > len(s) {
			continue
		}
		v, ok := hexValue(s[i+2 : i+2+n])
		if ok && (n == 2 && (v < 0x20 || v > 0x7e) || n > 2 && (v > unicode.MaxRune || !Rune(rune(v)))) {
			return true
		}
	}
	return false
}

// hexValue reads exactly hex digits, as many as s holds.
func hexValue(s string) (uint32, bool) {
	var v uint32
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint32(c)
	}
	return v, true
}

func hex(v uint32, digits int) string {
	const hexDigits = "0123456789abcdef"
	b := make([]byte, digits)
	for i := digits - 1; i >= 0; i-- {
		b[i], v = hexDigits[v&0xf], v>>4
	}
	return string(b)
}

// Message returns a message tickscope composed (an error, a warning, a
// line of a report) as one line of printable text: each character that
// does not print, and each byte of invalid UTF-8, written as its Go escape
// (a newline as \n, ESC as \x1b, U+009B as \u009b, a bad byte as \xff);
// printable text, backslashes included, is returned as it is. Unlike Line
// it is idempotent, so that a message can hold values already echoed
// unambiguously (by Line, or options.Value's quotes) and pass through it
// again unchanged; and so it is not injective: a value from outside is
// made unambiguous before it joins a message, not by Message.
func Message(s string) string {
	if String(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteString(`\x`)
			b.WriteString(hex(uint32(s[i]), 2))
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
