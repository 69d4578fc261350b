package report

import (
	"fmt"

	"github.com/tickscope/tickscope/internal/rawfile"
)

// Load is the load a result was measured under (--load): busy threads
// kept running beside the measurement for the whole run.
type Load struct {
	// Threads is how many busy threads ran; Kind what each did ("cpu": a
	// loop of integer arithmetic in registers).
	Threads int    `json:"threads"`
	Kind    string `json:"kind"`
	// CPUs is how many CPUs the machine had (the query's).
	CPUs int `json:"cpus"`
}

// LoadOf is f's load, nil when it was measured without one.
func LoadOf(f *rawfile.File) *Load {
	if f.Load == nil {
		return nil
	}
	l := &Load{Threads: f.Load.Threads, Kind: f.Load.Kind}
	if f.Query != nil {
		l.CPUs = f.Query.CPUs
	}
	return l
}

// String says what the load was, for the text output and the HTML page.
func (l *Load) String() string {
	threads := "threads"
	if l.Threads == 1 {
		threads = "thread"
	}
	kind := l.Kind
	if kind == rawfile.LoadCPU {
		kind = "a CPU-bound loop"
	}
	return fmt.Sprintf("%d busy %s (%s each, unpinned) ran throughout, on %d CPUs", l.Threads, threads, kind, l.CPUs)
}

// writeLoad prints the load line, when there was one.
func writeLoad(p *printer, l *Load) {
	if l != nil {
		p.kv("load", l.String())
	}
}
