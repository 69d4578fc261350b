package tracefs

import (
	"fmt"
	"strconv"
	"strings"
)

// PageLayout is the ring buffer's page header, from events/header_page:
//
//	field: u64 timestamp;	offset:0;	size:8;	signed:0;
//	field: local_t commit;	offset:8;	size:8;	signed:1;
//	field: int overwrite;	offset:8;	size:1;	signed:1;
//	field: char data;	offset:16;	size:4080;	signed:0;
//
// (Linux 6.18, x86-64). commit is a long: 8 bytes on a 64-bit kernel, 4 on
// a 32-bit one. Its low bits are the length of the page's data; bit 31
// (RB_MISSED_EVENTS) says events were lost before this page, bit 30
// (RB_MISSED_STORED) that their count is stored, as a long, right after
// the data. "overwrite" is a view of commit's byte that holds those flags
// (on a little-endian host, its low byte), not a field of its own.
type PageLayout struct {
	TimestampOffset int
	CommitOffset    int
	CommitSize      int // 8 or 4
	DataOffset      int
	// DataSize is the data's size as header_page says it, for a page of
	// the system's page size. A sub-buffer of another size
	// (buffer_subbuf_size_kb, Linux 6.8 on) has DataOffset bytes of header
	// and the rest data; ReadPage takes the size from the page it is given.
	DataSize int
}

// DefaultPageLayout is the page header of every 64-bit Linux since the
// ring buffer's 2008 layout: what ParseHeaderPage returns for x86-64 and
// arm64.
var DefaultPageLayout = PageLayout{TimestampOffset: 0, CommitOffset: 8, CommitSize: 8, DataOffset: 16, DataSize: 4080}

// ParseHeaderPage parses events/header_page.
func ParseHeaderPage(b []byte) (PageLayout, error) {
	if len(b) > MaxFormatBytes {
		return PageLayout{}, &FormatError{Reason: "header_page too long"}
	}
	var l PageLayout
	have := map[string]bool{}
	for n, line := range strings.Split(string(b), "\n") {
		t := strings.TrimSpace(line)
		if !strings.HasPrefix(t, "field:") {
			continue
		}
		fd, err := parseFieldLine(t)
		if err != nil {
			return PageLayout{}, &FormatError{n + 1, err.Error()}
		}
		switch fd.Name {
		case "timestamp":
			if fd.Size != 8 {
				return PageLayout{}, &FormatError{n + 1, fmt.Sprintf("timestamp of %d bytes, not 8", fd.Size)}
			}
			l.TimestampOffset = fd.Offset
		case "commit":
			if fd.Size != 8 && fd.Size != 4 {
				return PageLayout{}, &FormatError{n + 1, fmt.Sprintf("commit of %d bytes, not 4 or 8", fd.Size)}
			}
			l.CommitOffset, l.CommitSize = fd.Offset, fd.Size
		case "data":
			l.DataOffset, l.DataSize = fd.Offset, fd.Size
		default:
			continue
		}
		have[fd.Name] = true
	}
	for _, name := range []string{"timestamp", "commit", "data"} {
		if !have[name] {
			return PageLayout{}, &FormatError{Reason: "header_page has no " + name + " field"}
		}
	}
	if l.DataOffset < l.TimestampOffset+8 || l.DataOffset < l.CommitOffset+l.CommitSize {
		return PageLayout{}, &FormatError{Reason: fmt.Sprintf("data at %d overlaps the timestamp or commit", l.DataOffset)}
	}
	return l, nil
}

// EventHeader is the compressed event header, from events/header_event:
//
//	# compressed entry header
//		type_len    :    5 bits
//		time_delta  :   27 bits
//		array       :   32 bits
//
//		padding     : type == 29
//		time_extend : type == 30
//		time_stamp : type == 31
//		data max type_len  == 28
type EventHeader struct {
	TypeLenBits   int
	TimeDeltaBits int
	ArrayBits     int
	Padding       int
	TimeExtend    int
	TimeStamp     int
	DataMaxType   int
}

// SupportedEventHeader is the one header ReadPage decodes, that of every
// kernel since Linux 2.6.30 (include/linux/ring_buffer.h).
var SupportedEventHeader = EventHeader{TypeLenBits: 5, TimeDeltaBits: 27, ArrayBits: 32, Padding: 29, TimeExtend: 30, TimeStamp: 31, DataMaxType: 28}

// ParseHeaderEvent parses events/header_event.
func ParseHeaderEvent(b []byte) (EventHeader, error) {
	if len(b) > MaxFormatBytes {
		return EventHeader{}, &FormatError{Reason: "header_event too long"}
	}
	var h EventHeader
	set := map[string]bool{}
	for n, line := range strings.Split(string(b), "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		var key, val string
		var dst *int
		if k, v, ok := strings.Cut(t, ":"); ok {
			key, val = strings.TrimSpace(k), strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "bits"))
		} else if k, v, ok := strings.Cut(t, "=="); ok {
			key, val = strings.TrimSpace(k), strings.TrimSpace(v)
		} else {
			continue
		}
		switch key {
		case "type_len":
			dst = &h.TypeLenBits
		case "time_delta":
			dst = &h.TimeDeltaBits
		case "array":
			dst = &h.ArrayBits
		case "padding":
			dst = &h.Padding
		case "time_extend":
			dst = &h.TimeExtend
		case "time_stamp":
			dst = &h.TimeStamp
		case "data max type_len":
			dst = &h.DataMaxType
		default:
			continue
		}
		val = strings.TrimSpace(strings.TrimPrefix(val, "type =="))
		v, err := strconv.Atoi(strings.TrimSpace(val))
		if err != nil || v < 0 || v > 64 {
			return EventHeader{}, &FormatError{n + 1, fmt.Sprintf("%s: %q is not a number", key, val)}
		}
		*dst = v
		set[key] = true
	}
	for _, k := range []string{"type_len", "time_delta", "array", "padding", "time_extend", "time_stamp", "data max type_len"} {
		if !set[k] {
			return EventHeader{}, &FormatError{Reason: "header_event has no " + k}
		}
	}
	return h, nil
}

// Check reports whether ReadPage can decode events with this header.
func (h EventHeader) Check() error {
	if h != SupportedEventHeader {
		return &FormatError{Reason: fmt.Sprintf("event header %+v is not the one this reader knows (%+v)", h, SupportedEventHeader)}
	}
	return nil
}
