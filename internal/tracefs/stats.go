package tracefs

import (
	"fmt"
	"strconv"
	"strings"
)

// Stats is per_cpu/cpuN/stats, as kernel/trace/trace.c's
// tracing_stats_read writes it:
//
//	entries: 1595
//	overrun: 2166
//	commit overrun: 0
//	bytes: 67464
//	oldest event ts: 10707.644067
//	now ts: 10707.717737
//	dropped events: 0
//	read events: 0
//
// The counters are since the buffer was made or last reset.
type Stats struct {
	// Entries is the number of events in the buffer now.
	Entries uint64
	// Overrun is the events overwritten before they were read (overwrite
	// mode, the default).
	Overrun uint64
	// CommitOverrun is the events lost because an interrupting writer
	// wrapped the buffer while another was still committing.
	CommitOverrun uint64
	// Bytes is the bytes of the buffer's events.
	Bytes uint64
	// DroppedEvents is the events refused because the buffer was full
	// (overwrite off). Absent before Linux 3.10.
	DroppedEvents uint64
	// ReadEvents is the events consumed by readers.
	ReadEvents uint64
	// OldestTS and NowTS are the time stamps as written: seconds.micro
	// for a nanosecond clock (mono), a plain count for counter clocks.
	OldestTS string
	NowTS    string
	// Present names the counters the file had; a counter it lacked is 0
	// and not in Present.
	Present map[string]bool
}

// Lost is every event this CPU's buffer lost: overwritten, lost to a
// commit overrun, or dropped.
func (s Stats) Lost() uint64 { return s.Overrun + s.CommitOverrun + s.DroppedEvents }

// ParseStats parses a per_cpu/cpuN/stats file. It needs at least
// entries and overrun; a line it does not know is left alone.
func ParseStats(b []byte) (Stats, error) {
	if len(b) > MaxFormatBytes {
		return Stats{}, &FormatError{Reason: "stats too long"}
	}
	s := Stats{Present: map[string]bool{}}
	for n, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		var dst *uint64
		switch k {
		case "entries":
			dst = &s.Entries
		case "overrun":
			dst = &s.Overrun
		case "commit overrun":
			dst = &s.CommitOverrun
		case "bytes":
			dst = &s.Bytes
		case "dropped events":
			dst = &s.DroppedEvents
		case "read events":
			dst = &s.ReadEvents
		case "oldest event ts":
			s.OldestTS = v
			continue
		case "now ts":
			s.NowTS = v
			continue
		default:
			continue
		}
		u, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return Stats{}, &FormatError{n + 1, fmt.Sprintf("%s: %q is not a count", k, v)}
		}
		if s.Present[k] {
			return Stats{}, &FormatError{n + 1, k + " twice"}
		}
		*dst = u
		s.Present[k] = true
	}
	if !s.Present["entries"] || !s.Present["overrun"] {
		return Stats{}, &FormatError{Reason: "stats without entries and overrun"}
	}
	return s, nil
}
