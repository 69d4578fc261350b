package ui

import (
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/machine"
	"github.com/tickscope/tickscope/internal/platform"
	"github.com/tickscope/tickscope/internal/sim"
)

// machineServer is the page's server on this machine, as `tickscope ui`
// makes it (no listener: the benchmarks call it directly).
func machineServer(b *testing.B) *Server {
	b.Helper()
	s, err := New(Options{Host: machine.Host(), System: platform.NewSystem(), Shell: &sim.Shell{}, Stdout: io.Discard, Stderr: io.Discard}, "127.0.0.1:1")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	return s
}

// BenchmarkState is one reading of the live state on this machine, as the
// event stream sends it every second the page is open (the query, the
// startup holder's lock probe, and its JSON), who holds the timer left
// out: BenchmarkWho is that.
//
//	go test ./internal/ui -run '^$' -bench 'State|Who' -benchtime 50x
func BenchmarkState(b *testing.B) {
	s := machineServer(b)
	s.state() // the startup holder's definition, read every 10 s
	for b.Loop() {
		s.mu.Lock()
		s.holders.at = time.Now() // read just now: no read of who starts
		s.mu.Unlock()
		if _, err := json.Marshal(s.state()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWho is one reading of who holds the timer on this machine, as
// the page reads it every 10 s (on Linux a walk of /proc).
func BenchmarkWho(b *testing.B) {
	s := machineServer(b)
	for b.Loop() {
		done := make(chan struct{})
		s.readWho(done)
		<-done
	}
}
