package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/ui"
)

// TestUIRefusesAsTheCommandsDo: on this machine, every refusal of apply,
// global and startup remove that the page can meet is the command's own
// sentence, word for word: the command runs in this process, the page's
// action on a ui server of this machine, and the two errors are compared.
// The outcome also names the field whose value was refused, for the page
// to mark.
func TestUIRefusesAsTheCommandsDo(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ui.New(ui.Options{Host: machineHost(), System: machineSystem(), Shell: &sim.Shell{}, Stdout: io.Discard, Stderr: io.Discard}, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	go http.Serve(ln, s)
	origin := "http://" + ln.Addr().String()

	tests := []struct {
		command []string
		action  string
		body    map[string]any
		// field is the field the page's outcome names as refused: the
		// one flag whose value the refusal is about, or none.
		field string
	}{
		{[]string{"apply"}, "hold", map[string]any{}, ""},
		{[]string{"apply", "--resolution", "5000"}, "hold", map[string]any{"resolution": "5000"}, "resolution"},
		{[]string{"apply", "--ms", "0.5"}, "hold", map[string]any{"ms": "0.5"}, "ms"},
		{[]string{"apply", "--dma-latency", "abc"}, "hold", map[string]any{"dma-latency": "abc"}, "dma-latency"},
		{[]string{"apply", "--dma-latency", "-1"}, "hold", map[string]any{"dma-latency": "-1"}, "dma-latency"},
		{[]string{"apply", "--dma-latency", "99999999999"}, "hold", map[string]any{"dma-latency": "99999999999"}, "dma-latency"},
		{[]string{"apply", "--dma-latency", ""}, "hold", map[string]any{"dma-latency": ""}, "dma-latency"},
		{[]string{"apply", "--resolution", "0x10"}, "hold", map[string]any{"resolution": "0x10"}, "resolution"},
		{[]string{"apply", "--ms", "1e-1"}, "hold", map[string]any{"ms": "1e-1"}, "ms"},
		{[]string{"apply", "--ms", "0.5", "--while", ""}, "hold", map[string]any{"ms": "0.5", "while": ""}, "while"},
		{[]string{"apply", "--pid", "1", "--slack", "soon"}, "hold", map[string]any{"pid": "1", "slack": "soon"}, "slack"},
		{[]string{"apply", "--pid", "1"}, "hold", map[string]any{"pid": "1"}, ""},
		{[]string{"apply", "--slack", "1us"}, "hold", map[string]any{"slack": "1us"}, ""},
		{[]string{"apply", "--pid", "0", "--slack", "1us"}, "hold", map[string]any{"pid": "0", "slack": "1us"}, "pid"},
		{[]string{"apply", "--pid", "1", "--slack", "1.5ns"}, "hold", map[string]any{"pid": "1", "slack": "1.5ns"}, "slack"},
		{[]string{"apply", "--pid", "abc", "--slack", "1us"}, "hold", map[string]any{"pid": "abc", "slack": "1us"}, "pid"},
		{[]string{"apply", "--pid", "2", "--slack", "1us"}, "hold", map[string]any{"pid": "2", "slack": "1us"}, "pid"}, // kthreadd
		{[]string{"apply", "--pid", "1", "--slack", "2s"}, "hold", map[string]any{"pid": "1", "slack": "2s"}, "slack"},
		{[]string{"apply", "--resolution", "5000", "--persist"}, "persist", map[string]any{"resolution": "5000"}, "resolution"},
		{[]string{"apply", "--persist"}, "persist", map[string]any{}, ""},
		{[]string{"global", "on"}, "global", map[string]any{"on": true}, ""},
		{[]string{"global", "off"}, "global", map[string]any{"on": false}, ""},
	}
	for _, tt := range tests {
		var stderr bytes.Buffer
		a := &app{stdout: io.Discard, stderr: &stderr}
		if rc := a.execute(tt.command); rc == 0 {
			t.Fatalf("tickscope %s succeeded; the test wants a refusal", strings.Join(tt.command, " "))
		}
		want := strings.TrimSpace(strings.TrimPrefix(stderr.String(), "tickscope: error: "))

		body, _ := json.Marshal(tt.body)
		req, _ := http.NewRequest("POST", s.URL()+"api/"+tt.action, bytes.NewReader(body))
		req.Header.Set("Origin", origin)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var out ui.Outcome
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: %v", tt.action, err)
		}
		if out.Field != tt.field {
			t.Errorf("the page's outcome for %q names the field %q, want %q", out.Error, out.Field, tt.field)
		}
		if out.Error != want {
			t.Errorf("tickscope %s says\n  %q\nthe page says\n  %q", strings.Join(tt.command, " "), want, out.Error)
		}
		// (An empty value is shown quoted, as a shell needs it.)
		if got := "tickscope " + strings.Join(tt.command, " "); out.Command != got && !strings.Contains(out.Command, `""`) {
			t.Errorf("the page shows the command line %q, want %q", out.Command, got)
		}
	}
}
