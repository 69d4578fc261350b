// Package printabletest is what the tests of every renderer share to check
// that a string from outside tickscope reaches a terminal escaped: a
// hostile string and the check of a rendered text.
package printabletest

import (
	"strings"
	"testing"
	"unicode"
)

// Forged is a string from outside tickscope as a hostile user writes it:
// a clipboard write (OSC 52), an erased line, a carriage return and a
// forged line, CSI as C1, NUL, DEL and a bidirectional override.
const Forged = "\x1b]52;c;Zm9yZ2Vk\a\x1b[2K\r  recommend FORGED\n\u009b2J\x00\x7f\u202e"

// TerminalSafe fails the test when out holds a character a terminal acts
// on, other than the newlines that end its lines, or a line that starts
// with the forged one, or does not show Forged escaped.
func TerminalSafe(t testing.TB, what, out string) {
	t.Helper()
	for _, r := range out {
		if r != '\n' && r != ' ' && !unicode.IsPrint(r) {
			t.Errorf("%s writes %U to the terminal:\n%q", what, r, out)
			return
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "recommend FORGED") {
			t.Errorf("%s writes a forged line:\n%s", what, out)
		}
	}
	if !strings.Contains(out, `\x1b]52;c;`) {
		t.Errorf("%s does not show the escaped string:\n%s", what, out)
	}
}
