package watch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/outfile"
	"github.com/tickscope/tickscope/internal/printable"
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
	State *State `json:"state,omitempty"`
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

// OpenLog opens the --log file for appending, creating it, under the rule
// of every output file (outfile.OpenAppend): only a regular file (or a
// symlink to one that another user could not have planted) is written;
// anything else is a usage error naming the flag. A file that ends in a torn line (a crash) gets a
// newline first, so that the torn line stays the only bad one.
func OpenLog(flag, path string) (*Log, error) {
	if path == "" {
		return &Log{}, nil
	}
	if err := CheckLog(flag, path); err != nil {
		return nil, err
	}
	_, statErr := os.Stat(path)
	f, err := outfile.OpenAppend(flag, path)
	if err != nil {
		return nil, err
	}
	if os.IsNotExist(statErr) {
		syncDir(filepath.Dir(path)) // so that a crash does not lose the new file's name
	}
	if info, err := f.Stat(); err == nil && info.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, info.Size()-1); err == nil && last[0] != '\n' {
			if _, err := f.Write([]byte{'\n'}); err != nil {
				f.Close()
				return nil, fmt.Errorf("writing %s: %w", path, err)
			}
		}
	}
	return &Log{f: f}, nil
}

// CheckLog refuses a --log path that is not a regular file (or a symlink
// to one, or missing), as a usage error naming the flag, without opening
// it.
func CheckLog(flag, path string) error {
	if path == "" {
		return nil
	}
	if _, err := outfile.Target(path); err != nil {
		return options.BadFlag(flag, path, "%v", err)
	}
	return nil
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

// syncDir syncs a directory's entries where the OS can (not Windows, whose
// directories cannot be opened for it); a failure leaves only the new
// file's name at risk in a crash, so it is not reported.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
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
