package watch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tickscope/tickscope/internal/printable"
	"github.com/tickscope/tickscope/internal/timerstate"
	"github.com/tickscope/tickscope/internal/who"
)

// The kinds of event a watch run emits, one JSON line each.
const (
	EventStart   = "start"
	EventChange  = "change"
	EventBurst   = "burst"
	EventError   = "error"
	EventSummary = "summary"
)

// Event is one line of watch's log and of watch --json (docs/json.md).
type Event struct {
	Time  time.Time `json:"time"`
	Event string    `json:"event"`
	// Start is the run's settings (start).
	Start *Start `json:"start,omitempty"`
	// State is the state read (start, change).
	State *timerstate.State `json:"state,omitempty"`
	// Changes is what differs from the read before (change).
	Changes []Change `json:"changes,omitempty"`
	// Holders is who holds the timer (start, and a change of the period or
	// the DMA latency in force), where the OS can tell (package who).
	Holders      *[]who.Hold `json:"holders,omitempty"`
	HoldersError string      `json:"holders_error,omitempty"`
	Burst        *Burst      `json:"burst,omitempty"`
	// Error is a state read or a burst that failed (error); the run goes on.
	Error   string   `json:"error,omitempty"`
	Summary *Summary `json:"summary,omitempty"`
}

// Start is what a run watches and how often.
type Start struct {
	Version        string `json:"version"`
	EveryNs        int64  `json:"every_ns"`
	MeasureEveryNs int64  `json:"measure_every_ns"`
	Method         string `json:"method"`
	DelayNs        int64  `json:"delay_ns"`
	Waits          int    `json:"waits"`
}

// Burst is one short measurement of the wait method.
type Burst struct {
	Method  string `json:"method"`
	DelayNs int64  `json:"delay_ns"`
	Waits   int    `json:"waits"`
	// Lateness percentiles (nearest rank) and maximum of this burst, ns.
	P50Ns int64 `json:"p50_lateness_ns"`
	P99Ns int64 `json:"p99_lateness_ns"`
	MaxNs int64 `json:"max_lateness_ns"`
	// Lateness is every wait's lateness, for the histograms; not logged.
	Lateness []int64 `json:"-"`
}

// Log appends events to a file as JSON lines. Each line is marshalled
// whole, written with one write to a file opened for appending, and
// synced to the disk before the next (fsync; FlushFileBuffers on
// Windows): a killed watch leaves only complete lines, and a crash of the
// machine loses at most the line being written, which it may leave torn.
// Lines come at most about once per --every and per burst, so the sync
// costs little (BENCHMARKS.md). A write that fails part way (a full disk)
// is cut back to the last whole line, so that the log never ends torn.
type Log struct {
	f logFile
}

// logFile is what Log needs of its file (an *os.File; a test's fake
// fails where a full disk would).
type logFile interface {
	io.Writer
	io.ReaderAt
	io.Seeker
	Sync() error
	Truncate(size int64) error
	Close() error
}

// NewLog is the log that appends to f (outfile.OpenLines opens --log's);
// a nil f is no log, which writes nothing.
func NewLog(f *os.File) *Log {
	if f == nil {
		return &Log{}
	}
	return &Log{f: f}
}

// Write appends one event as one line. A Log without a file writes
// nothing. When the write fails (a full disk takes part of the line), the
// file is cut back to the end of its last whole line.
func (l *Log) Write(e Event) error {
	if l == nil || l.f == nil {
		return nil
	}
	end, err := l.f.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	if err := WriteLine(l.f, e); err != nil {
		if cutErr := l.cutTornLine(end); cutErr != nil {
			return fmt.Errorf("%w; and cutting off the partial line failed: %v", err, cutErr)
		}
		return fmt.Errorf("%w (the partial line was cut off)", err)
	}
	return l.f.Sync()
}

// cutTornLine truncates the file after the last newline written since
// offset end, where the failed write began (the file ended in a whole
// line there), or back to end when there is none: what another writer
// appended meanwhile in whole lines is kept.
func (l *Log) cutTornLine(end int64) error {
	size, err := l.f.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	if size <= end {
		return nil
	}
	tail := make([]byte, size-end)
	if _, err := l.f.ReadAt(tail, end); err != nil && err != io.EOF {
		return err
	}
	keep := end + int64(bytes.LastIndexByte(tail, '\n')+1)
	if err := l.f.Truncate(keep); err != nil {
		return err
	}
	return l.f.Sync()
}

// Close closes the file.
func (l *Log) Close() error {
	if l == nil || l.f == nil {
		return nil
	}
	return l.f.Close()
}

// WriteLine writes e as one JSON line with one Write. Every character that
// does not print is written as a \u escape (printable.JSON): an error's
// text or a holder's name must not drive the terminal of whoever reads
// the log or watch --json.
func WriteLine(w io.Writer, e Event) error {
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = w.Write(append(printable.JSON(line), '\n'))
	return err
}
