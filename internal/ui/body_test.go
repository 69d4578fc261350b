package ui

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestActionBodies: an action's body is one JSON object, each field once
// and spelt exactly, nothing after it; anything else is a 400 (413 when
// too large) with a one-line reason, and runs nothing. Trailing white
// space is allowed.
func TestActionBodies(t *testing.T) {
	s, _ := newTestServer(t, "narrow-band")
	for _, tt := range []struct {
		action, body, reason string
	}{
		{"hold", `{"ms":"1"}garbage`, "the body is one JSON object; more follows it at byte 10"},
		{"hold", `{"ms":"1"}{"ms":"2"}`, "the body is one JSON object; more follows it at byte 11"},
		{"hold", `{"pid":"1","pid":"2","slack":"1us"}`, `field pid is given twice; give each field once`},
		{"hold", `{"ms":1}`, "cannot unmarshal number into Go value of type string"},
		{"hold", `{"for":"1s"}`, "unknown field for; this action's fields are: resolution, ms, dma-latency, while, pid, slack"},
		{"hold", `{"MS":"1"}`, "unknown field MS; "},
		{"persist", `{"resolution":"5000"} x`, "more follows it at byte"},
		{"measure", `{"samples":5}{"samples":6}`, "more follows it"},
		{"measure", `{"samples":5} ]`, "more follows it"},
		{"measure", `{"samples":5,"samples":6}`, "field samples is given twice"},
		{"measure", `{"Samples":5}`, "unknown field Samples; this action's fields are: method, samples"},
		{"measure", `{"samples":"5"}`, "cannot unmarshal string into Go struct field"},
		{"measure", `{"samples":5.5}`, "cannot unmarshal number 5.5"},
		{"measure", `{"samples":1e400}`, "cannot unmarshal number 1e400"},
		{"measure", `{"samples":{"a":1,"a":2}}`, "field a is given twice"},
		{"measure", `{"samples":5,}`, "the body is not valid JSON: invalid character '}'"},
		{"measure", `{'samples':5}`, "the body is not valid JSON: invalid character '\\''"},
		{"measure", `{"samples":5`, "the body is not valid JSON: it ends early"},
		{"measure", `{"samples":`, "the body is not valid JSON: it ends early"},
		{"measure", `{/*x*/}`, "the body is not valid JSON"},
		{"measure", "\ufeff{}", "the body is one JSON object, such as {}"},
		{"measure", ``, "the body is one JSON object, such as {}"},
		{"measure", `[]`, "the body is one JSON object, such as {}"},
		{"measure", `null`, "the body is one JSON object, such as {}"},
		{"measure", `"x"`, "the body is one JSON object, such as {}"},
		{"measure", `5`, "the body is one JSON object, such as {}"},
		{"measure", "{\"a\nb\":1}", `the body is not valid JSON: invalid character '\n' in string literal`},
		{"measure", `{"a\u001b[2Jb":1}`, `unknown field "a\x1b[2Jb"`},
		{"measure", `{"` + strings.Repeat("k", 3000) + `":1}`, "unknown field " + strings.Repeat("k", 64) + "… (3000 characters)"},
		{"bench", `{"prefer":"power"}x`, "more follows it"},
		{"bench", `{"prefer":"power","prefer":"latency"}`, "field prefer is given twice"},
		{"global", `{"on":true}true`, "more follows it"},
		{"global", `{"on":"yes"}`, "cannot unmarshal string"},
		{"global", `{"on":true,"on":false}`, "field on is given twice"},
		{"elevate", `{"on":true,"x":1}`, "unknown field x; this action's fields are: on"},
		{"stop", `{"x":1}`, "unknown field x; this action's fields are: none ({})"},
		{"release", `{}{}`, "more follows it"},
		{"remove", `[]`, "the body is one JSON object"},
		{"remove", `{"samples":5}`, "unknown field samples"},
		{"measure", `{"method":"` + strings.Repeat("x", 5000) + `"}`, "the body is over 4096 bytes"},
	} {
		resp := request(t, s, "POST", "/"+s.token+"/api/"+tt.action, s.addr, s.origin, "application/json", tt.body)
		got, _ := io.ReadAll(resp.Body)
		want := http.StatusBadRequest
		if len(tt.body) > maxActionBody {
			want = http.StatusRequestEntityTooLarge
		}
		line := strings.TrimSuffix(string(got), "\n")
		if resp.StatusCode != want || !strings.HasPrefix(line, "bad request: ") || !strings.Contains(line, tt.reason) ||
			strings.ContainsAny(line, "\n\r") || len(line) > 400 {
			t.Errorf("%s %.80q: %d %q, want %d and one line with %q", tt.action, tt.body, resp.StatusCode, got, want, tt.reason)
		}
	}
	if s.jobs != 0 || s.held != nil {
		t.Errorf("a refused body ran an action: %d jobs, held %v", s.jobs, s.held)
	}
	// What the page sends is taken, trailing white space included.
	for _, tt := range []struct{ action, body string }{
		{"stop", `{}`}, {"release", " {}\n"}, {"measure", "{\"samples\":5}\r\n\t "}, {"global", `{"on":false}`},
	} {
		resp := request(t, s, "POST", "/"+s.token+"/api/"+tt.action, s.addr, s.origin, "application/json", tt.body)
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			t.Errorf("%s %q: %d %s", tt.action, tt.body, resp.StatusCode, b)
		}
	}
}
