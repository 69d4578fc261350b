// Package rawfile writes and reads tickscope's raw-samples file: every
// latency of every measured point, with what was requested and granted and
// the conditions it ran under, so that a run can be shared and re-judged.
//
// The format is a versioned JSON document, specified in docs/raw-format.md.
// Files are written atomically and read strictly: a reader that accepted a
// damaged file would re-judge a run on data nobody measured.
package rawfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tickscope/tickscope/internal/timerinfo"
)

// FormatName identifies the document; Version is the one this code writes
// and the only one it reads.
const (
	FormatName = "tickscope-raw"
	Version    = 1
)

// Bounds a reader enforces on values.
const (
	// MaxDelayNs is the longest requested delay a file may hold (1 s, the
	// longest any command requests).
	MaxDelayNs = int64(time.Second)
	// MaxLatencyNs bounds one sample: a wait of over a minute is not a
	// measurement of a timer but of a suspended machine.
	MaxLatencyNs = int64(time.Minute)
	// MaxPoints and MaxSamplesPerPoint bound what a file may claim.
	MaxPoints          = 100_000
	MaxSamplesPerPoint = 100_000
)

// File is a raw-samples document.
type File struct {
	Format  string    `json:"format"`
	Version int       `json:"version"`
	Tool    Tool      `json:"tool"`
	Created time.Time `json:"created"`
	// Command is the tickscope command that wrote the file: "measure",
	// "bench", "curve" or "compare".
	Command string `json:"command"`
	// Simulated names the model scenario the points came from, or is empty
	// for a real measurement.
	Simulated string            `json:"simulated,omitempty"`
	Query     *timerinfo.Report `json:"query"`
	Method    string            `json:"method"`
	DelayNs   int64             `json:"delay_ns"`
	// Bench records how a bench sampled, which its judgement depends on.
	Bench  *BenchParams `json:"bench,omitempty"`
	Points []Point      `json:"points"`
}

// BenchParams are a bench's sampling parameters.
type BenchParams struct {
	// Samples is the full count per point (--samples).
	Samples    int    `json:"samples"`
	Exhaustive bool   `json:"exhaustive"`
	Seed       uint64 `json:"seed"`
	// Requests is how many candidate requests the grid held.
	Requests int `json:"requests"`
}

// PhaseRecheck marks the bench's re-check points.
const PhaseRecheck = "recheck"

// Tool says which build wrote a file.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Point is one measured setting.
type Point struct {
	Requested  timerinfo.Setting    `json:"requested"`
	Granted    timerinfo.Setting    `json:"granted"`
	Conditions timerinfo.Conditions `json:"conditions"`
	Warmup     int                  `json:"warmup_discarded"`
	Overruns   int                  `json:"overruns"`
	// Stopped marks a point cut short by the user.
	Stopped bool `json:"stopped,omitempty"`
	// Phase is empty for a measurement, "recheck" for the bench's second
	// look at its winner and the floor.
	Phase string `json:"phase,omitempty"`
	// Method is this point's wait method when it differs from the file's
	// (compare measures many), and Periodic says its waits kept an absolute
	// schedule, so its intervals are the differences of successive wakes.
	Method   string `json:"method,omitempty"`
	Periodic bool   `json:"periodic,omitempty"`
	// DelayNs is this point's requested delay when it differs from the
	// file's (curve measures one point per delay); 0 means the file's.
	DelayNs int64 `json:"delay_ns,omitempty"`
	// SameAs lists other requests (100 ns units) that the OS granted the
	// same period: the bench measured them once, here.
	SameAs    []uint32 `json:"same_as_100ns,omitempty"`
	Latencies []int64  `json:"latencies_ns"`
}

// ReadFile reads and validates the raw-samples file at path.
func ReadFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

// Parse decodes and validates a raw-samples document. Errors say where the
// problem is: a line and column for broken JSON, a field path for bad values.
func Parse(data []byte) (*File, error) {
	// Check the header first, so that a file from a future tickscope gets
	// "unsupported version" rather than whatever its new fields trip on.
	var header struct {
		Format  *string `json:"format"`
		Version *int    `json:"version"`
	}
	if err := json.Unmarshal(data, &header); err != nil {
		return nil, describeJSONError(data, err)
	}
	switch {
	case header.Format == nil:
		return nil, errors.New(`not a tickscope raw-samples file: no "format" field`)
	case *header.Format != FormatName:
		return nil, fmt.Errorf("not a tickscope raw-samples file: format is %q, want %q", *header.Format, FormatName)
	case header.Version == nil:
		return nil, errors.New(`no "version" field`)
	case *header.Version > Version:
		return nil, fmt.Errorf("version %d was written by a newer tickscope; this one reads version %d", *header.Version, Version)
	case *header.Version != Version:
		return nil, fmt.Errorf("unknown version %d; this tickscope reads version %d", *header.Version, Version)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, describeJSONError(data, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("at %s: data after the end of the document", position(data, dec.InputOffset()))
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return &f, nil
}

// Validate checks values a decoder cannot: presence, ranges and sizes.
func (f *File) Validate() error {
	switch {
	case f.Tool.Name == "":
		return errors.New("tool.name: missing")
	case f.Command == "":
		return errors.New("command: missing")
	case f.Query == nil:
		return errors.New("query: missing")
	case f.Query.OS == "":
		return errors.New("query.os: missing")
	case f.Method == "":
		return errors.New("method: missing")
	case f.DelayNs <= 0:
		return fmt.Errorf("delay_ns: %d is not positive", f.DelayNs)
	case f.DelayNs > MaxDelayNs:
		return fmt.Errorf("delay_ns: %d is over the limit of %d", f.DelayNs, MaxDelayNs)
	case f.Bench != nil && (f.Bench.Samples < 1 || f.Bench.Samples > MaxSamplesPerPoint):
		return fmt.Errorf("bench.samples: %d is outside 1..%d", f.Bench.Samples, MaxSamplesPerPoint)
	case len(f.Points) == 0:
		return errors.New("points: empty")
	case len(f.Points) > MaxPoints:
		return fmt.Errorf("points: %d is over the limit of %d", len(f.Points), MaxPoints)
	}
	for i, p := range f.Points {
		where := fmt.Sprintf("points[%d]", i)
		if err := validateSetting(where+".requested", p.Requested); err != nil {
			return err
		}
		if err := validateSetting(where+".granted", p.Granted); err != nil {
			return err
		}
		switch {
		case p.Phase != "" && p.Phase != PhaseRecheck:
			return fmt.Errorf("%s.phase: %q is not one of \"\", %q", where, p.Phase, PhaseRecheck)
		case p.DelayNs < 0 || p.DelayNs > MaxDelayNs:
			return fmt.Errorf("%s.delay_ns: %d is outside 0..%d", where, p.DelayNs, MaxDelayNs)
		case p.Warmup < 0:
			return fmt.Errorf("%s.warmup_discarded: %d is negative", where, p.Warmup)
		case p.Overruns < 0:
			return fmt.Errorf("%s.overruns: %d is negative", where, p.Overruns)
		case len(p.Latencies) == 0:
			return fmt.Errorf("%s.latencies_ns: empty", where)
		case len(p.Latencies) > MaxSamplesPerPoint:
			return fmt.Errorf("%s.latencies_ns: %d samples is over the limit of %d", where, len(p.Latencies), MaxSamplesPerPoint)
		}
		for j, v := range p.Latencies {
			if v < 0 {
				return fmt.Errorf("%s.latencies_ns[%d]: %d is negative", where, j, v)
			}
			if v > MaxLatencyNs {
				return fmt.Errorf("%s.latencies_ns[%d]: %d ns is absurd (over %v)", where, j, v, time.Duration(MaxLatencyNs))
			}
		}
	}
	return nil
}

func validateSetting(where string, s timerinfo.Setting) error {
	// 1 s is coarser than any timer period an OS offers.
	if s.Resolution100ns > 10_000_000 {
		return fmt.Errorf("%s.resolution_100ns: %d is absurd (over 1 s)", where, s.Resolution100ns)
	}
	if s.TimeBeginPeriodMs > 1000 {
		return fmt.Errorf("%s.time_begin_period_ms: %d is absurd (over 1 s)", where, s.TimeBeginPeriodMs)
	}
	if s.SlackNs < 0 || s.SlackNs > int64(time.Second) {
		return fmt.Errorf("%s.slack_ns: %d is outside 0..1s", where, s.SlackNs)
	}
	if d := s.CPUDMALatencyUs; d != nil && *d < 0 {
		return fmt.Errorf("%s.cpu_dma_latency_us: %d is negative", where, *d)
	}
	return nil
}

// describeJSONError turns a decoder error into one that says where.
func describeJSONError(data []byte, err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return fmt.Errorf("truncated: the document ends at byte %d before it is complete", len(data))
	case errors.As(err, &syntax):
		if syntax.Offset >= int64(len(bytes.TrimRight(data, " \t\r\n"))) {
			return fmt.Errorf("truncated: the document ends at byte %d before it is complete", len(data))
		}
		return fmt.Errorf("at %s: %v", position(data, syntax.Offset-1), syntax)
	case errors.As(err, &typ):
		return fmt.Errorf("at %s: %s: %v is not a valid %v", position(data, typ.Offset), typ.Field, typ.Value, typ.Type)
	}
	return err
}

// position renders a byte offset as "line L, column C" (both from 1).
func position(data []byte, offset int64) string {
	offset = min(max(offset, 0), int64(len(data)))
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int64(len(before)) - int64(bytes.LastIndexByte(before, '\n'))
	return fmt.Sprintf("line %d, column %d", line, col)
}
