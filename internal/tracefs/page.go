package tracefs

import (
	"fmt"
)

// The ring buffer's event types (include/linux/ring_buffer.h, enum
// ring_buffer_type): a type_len of 1 to 28 is a data record of type_len*4
// bytes, 0 one whose length is in array[0].
const (
	typeDataMax    = 28
	typePadding    = 29
	typeTimeExtend = 30
	typeTimeStamp  = 31

	tsShift = 27              // time_delta's width
	tsMSB   = 0xf8 << 56      // the 5 bits a TIME_STAMP does not carry (TS_MSB)
	tsWrap  = uint64(1) << 59 // added when those bits roll over

	// The commit word's flags (kernel/trace/ring_buffer.c). The kernel
	// sets them as int constants into a long, so on a 64-bit kernel bits
	// 32 to 63 are copies of bit 31: only the low 32 bits mean anything.
	missedEvents = 1 << 31 // RB_MISSED_EVENTS
	missedStored = 1 << 30 // RB_MISSED_STORED
	commitMask   = missedStored - 1
)

// PageHeader is what a ring-buffer page says about itself.
type PageHeader struct {
	// Timestamp is the time of the page's first event, in the trace
	// clock's units (ns for mono), before that event's own delta.
	Timestamp uint64
	// Commit is the raw commit word; DataSize its length part.
	Commit   uint64
	DataSize int
	// Lost is true when the kernel lost events on this CPU between the
	// previous page read and this one (RB_MISSED_EVENTS): nothing may be
	// attributed across that gap. LostCount is their number when the page
	// had room to store it (RB_MISSED_STORED; LostCountKnown).
	Lost           bool
	LostCountKnown bool
	LostCount      uint64
}

// Event is one data record of a page.
type Event struct {
	// Timestamp is the event's absolute time in the trace clock's units
	// (CLOCK_MONOTONIC nanoseconds for trace_clock mono).
	Timestamp uint64
	// Type is the record's common_type: the ID of its format.
	Type uint16
	// Data is the record, from common_type on, as long as the ring buffer
	// reserved it (rounded up to 4 bytes); it aliases the page.
	Data []byte
}

// PageError says why a page could not be read, and where.
type PageError struct {
	Offset int // byte offset in the page; -1 for the header
	Reason string
}

func (e *PageError) Error() string {
	if e.Offset < 0 {
		return "tracefs: page header: " + e.Reason
	}
	return fmt.Sprintf("tracefs: page at byte %d: %s", e.Offset, e.Reason)
}

// PageReader walks the events of one ring-buffer page (a read of
// per_cpu/cpuN/trace_pipe_raw). It allocates nothing per event, and each
// step moves forward by at least 4 bytes, so a page of n bytes costs at
// most n/4 steps whatever its content.
type PageReader struct {
	Header PageHeader
	page   []byte
	off    int    // the data's offset in the page
	data   []byte // the data part, DataSize bytes
	pos    int
	ts     uint64
	ev     Event
	err    error
	done   bool
}

// ReadPage reads a page's header and readies its events. The page is a
// whole read of trace_pipe_raw: layout.DataOffset bytes of header, then
// data; its length is the sub-buffer size (the system's page size unless
// buffer_subbuf_size_kb says otherwise).
func ReadPage(page []byte, layout PageLayout) (*PageReader, error) {
	if layout.CommitSize != 4 && layout.CommitSize != 8 {
		return nil, &PageError{-1, fmt.Sprintf("commit of %d bytes", layout.CommitSize)}
	}
	if layout.TimestampOffset < 0 || layout.CommitOffset < 0 || layout.DataOffset < 0 ||
		layout.TimestampOffset+8 > len(page) || layout.CommitOffset+layout.CommitSize > len(page) || layout.DataOffset > len(page) {
		return nil, &PageError{-1, fmt.Sprintf("page of %d bytes is shorter than its header", len(page))}
	}
	r := &PageReader{page: page}
	h := &r.Header
	h.Timestamp = le.Uint64(page[layout.TimestampOffset:])
	if layout.CommitSize == 8 {
		h.Commit = le.Uint64(page[layout.CommitOffset:])
	} else {
		h.Commit = uint64(le.Uint32(page[layout.CommitOffset:]))
	}
	low := uint32(h.Commit)
	h.DataSize = int(low & commitMask)
	data := page[layout.DataOffset:]
	if h.DataSize > len(data) {
		return nil, &PageError{-1, fmt.Sprintf("commit says %d bytes of data, the page has %d", h.DataSize, len(data))}
	}
	if low&missedEvents != 0 {
		h.Lost = true
		if low&missedStored != 0 {
			end := h.DataSize + layout.CommitSize
			if end > len(data) {
				return nil, &PageError{-1, "lost-event count stored past the page's end"}
			}
			h.LostCountKnown = true
			if layout.CommitSize == 8 {
				h.LostCount = le.Uint64(data[h.DataSize:])
			} else {
				h.LostCount = uint64(le.Uint32(data[h.DataSize:]))
			}
		}
	}
	r.data = data[:h.DataSize]
	r.off = layout.DataOffset
	r.ts = h.Timestamp
	return r, nil
}

// Next moves to the page's next data record, reporting false at the end
// of the page or at a malformed record (then Err says which).
func (r *PageReader) Next() bool {
	for !r.done && r.err == nil {
		if r.pos+4 > len(r.data) {
			if r.pos != len(r.data) {
				r.fail(r.pos, fmt.Sprintf("%d bytes left, too few for an event header", len(r.data)-r.pos))
			}
			r.done = true
			return false
		}
		at := r.pos
		hdr := le.Uint32(r.data[at:])
		typeLen := hdr & 0x1f
		delta := uint64(hdr >> 5)
		switch {
		case typeLen == typePadding:
			if delta == 0 {
				// A null event: the rest of the page is padding.
				r.done = true
				return false
			}
			// A discarded event: array[0] is its length past the header.
			// The kernel's reader does not add its delta.
			n, ok := r.word(at + 4)
			if !ok {
				return false
			}
			if !r.skip(at, 4+int64(n)) {
				return false
			}
		case typeLen == typeTimeExtend:
			ext, ok := r.word(at + 4)
			if !ok {
				return false
			}
			r.ts += uint64(ext)<<tsShift | delta
			if !r.skip(at, 8) {
				return false
			}
		case typeLen == typeTimeStamp:
			ext, ok := r.word(at + 4)
			if !ok {
				return false
			}
			abs := uint64(ext)<<tsShift | delta
			// rb_fix_abs_ts: the stamp carries 59 bits; the 5 above come
			// from the time before it, plus a wrap if it went backwards.
			if r.ts&tsMSB != 0 {
				abs |= r.ts & tsMSB
				if abs < r.ts {
					abs += tsWrap
				}
			}
			r.ts = abs
			if !r.skip(at, 8) {
				return false
			}
		default:
			var start, length int64
			if typeLen == 0 {
				n, ok := r.word(at + 4)
				if !ok {
					return false
				}
				if n < 4 {
					r.fail(at, fmt.Sprintf("array[0] length %d is less than its own 4 bytes", n))
					return false
				}
				// Rounded up to the 4-byte alignment of every event, as
				// kbuffer-parse.c reads it.
				start, length = int64(at)+8, (int64(n)-4+3)&^3
			} else {
				start, length = int64(at)+4, int64(typeLen)*4
			}
			if start+length > int64(len(r.data)) {
				r.fail(at, fmt.Sprintf("record of %d bytes runs past the data's %d", length, len(r.data)))
				return false
			}
			if length < 2 {
				r.fail(at, "record too short for common_type")
				return false
			}
			r.ts += delta
			rec := r.data[start : start+length]
			r.ev = Event{Timestamp: r.ts, Type: le.Uint16(rec), Data: rec}
			r.pos = int(start + length)
			return true
		}
	}
	return false
}

func (r *PageReader) word(at int) (uint32, bool) {
	if at+4 > len(r.data) {
		r.fail(at, "event header's array[0] past the data's end")
		return 0, false
	}
	return le.Uint32(r.data[at:]), true
}

func (r *PageReader) skip(at int, n int64) bool {
	if int64(at)+n > int64(len(r.data)) {
		r.fail(at, fmt.Sprintf("event of %d bytes runs past the data's %d", n, len(r.data)))
		return false
	}
	r.pos = at + int(n)
	return true
}

func (r *PageReader) fail(at int, reason string) {
	r.err = &PageError{Offset: r.off + at, Reason: reason}
	r.done = true
}

// Event is the record Next moved to; its Data aliases the page.
func (r *PageReader) Event() Event { return r.ev }

// Err is the malformed record that stopped Next, if any.
func (r *PageReader) Err() error { return r.err }
