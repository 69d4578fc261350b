package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestOutputIsPrintable: --json output and warnings show a string from
// outside (a process's name, a file's) with every character that does not
// print escaped; the JSON still reads back as the same value.
func TestOutputIsPrintable(t *testing.T) {
	const forged = "\x1b]52;c;Zm9yZ2Vk\a\u009b2J\x7f\u202e\n  recommend FORGED"
	var b bytes.Buffer
	if err := writeJSON(&b, map[string]string{"name": forged}); err != nil {
		t.Fatal(err)
	}
	var back map[string]string
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || back["name"] != forged {
		t.Errorf("--json reads back as %q (%v)", back, err)
	}
	var errw bytes.Buffer
	a := &app{stdout: &b, stderr: &errw}
	a.warnf("process %s holds it", forged)
	a.hintf("kill %s", forged)
	for what, out := range map[string]string{"--json": b.String(), "warnings": errw.String()} {
		for _, r := range strings.TrimSuffix(out, "\n") {
			if r == '\n' {
				continue // the lines' own ends: the forged one is escaped
			}
			if r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r == '\u202e' {
				t.Errorf("%s holds %U: %q", what, r, out)
				break
			}
		}
	}
	if strings.Count(errw.String(), "\n") != 2 {
		t.Errorf("two warnings took more than two lines: %q", errw.String())
	}
}
