package who

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf16"
)

// KernelPowerProvider is the Microsoft-Windows-Kernel-Power provider's
// GUID, {331C3B3A-2005-44C2-AC5E-77220C37D6B4}, as its manifest declares it.
const KernelPowerProvider = "{331C3B3A-2005-44C2-AC5E-77220C37D6B4}"

// KernelPowerKeyword is the keyword mask tickscope enables: po:Diagnostic
// (0x4, which the manifest gives every timer event) and the high bit that
// UIforETW's trace_timer_intervals.bat adds (0x4000000000000004).
const KernelPowerKeyword = 0x4000000000000004

// The Kernel-Power events that concern the timer (the manifest's event
// values; google/UIforETW's bin/trace_timer_intervals.bat enables the same).
const (
	// EventTimeResolutionChange (SystemTimeResolutionChange) is a process
	// requesting a period, or releasing its request (period 0).
	EventTimeResolutionChange = 63
	// EventTimeResolutionUpdate (SystemTimeResolutionUpdate) is the timer
	// changing period.
	EventTimeResolutionUpdate = 95
	// EventTimeResolutionRundown (SystemTimeResolutionRundown) is the
	// timer's state, in the rundown.
	EventTimeResolutionRundown = 96
	// EventTimeResolutionRequestRundown (SystemTimeResolutionRequestRundown)
	// is one process's outstanding request, in the rundown.
	EventTimeResolutionRequestRundown = 97
	// EventTimerResolutionStackRundown (SystemTimerResolutionStackRundown)
	// is a request's stack, in the rundown.
	EventTimerResolutionStackRundown = 110
)

// fieldType is a manifest inType that the timer events use.
type fieldType int

const (
	u16 fieldType = iota // win:UInt16
	u32                  // win:UInt32
	// wstr is win:UnicodeString with length="<the previous u16 field>":
	// that many UTF-16 code units, no terminator.
	wstr
	// ptrs is win:Pointer with count="<the previous u32 field>": that many
	// pointers, 4 or 8 bytes each as the event header says.
	ptrs
)

// field is one <data> of a manifest template.
type field struct {
	name string
	typ  fieldType
}

// layoutKey is an event id and version.
type layoutKey struct {
	id      uint16
	version uint8
}

// layouts are the templates of the timer events, field by field, from the
// provider's manifest (Microsoft-Windows-Kernel-Power, as dumped from
// Windows 10 1803 by repnz/etw-providers-docs; later builds add
// versions, never reorder fields, so extra bytes after the last field
// are allowed).
var layouts = map[layoutKey][]field{
	// SystemTimeResolutionChange version 0 uses SetExecutionStateArgs:
	// the requested period is its first UInt32, and the process is the
	// event header's.
	{EventTimeResolutionChange, 0}: {{"RequestedResolution", u32}, {"AppNameLength", u16}, {"AppName", wstr}},
	// SystemTimeResolutionChangeArgs_V1.
	{EventTimeResolutionChange, 1}: {{"RequestedResolution", u32}, {"Pid", u32}, {"AppNameLength", u16}, {"AppName", wstr}, {"SubProcessTag", u32}},
	// SystemTimeResolutionUpdateArgs.
	{EventTimeResolutionUpdate, 0}: {{"NewResolution", u32}},
	// SystemTimeResolutionRundownArgs and _V1.
	{EventTimeResolutionRundown, 0}: {{"CurrentPeriod", u32}, {"MinimumPeriod", u32}, {"MaximumPeriod", u32}, {"KernelRequestCount", u32}, {"KernelRequestedPeriod", u32}},
	{EventTimeResolutionRundown, 1}: {{"CurrentPeriod", u32}, {"MinimumPeriod", u32}, {"MaximumPeriod", u32}, {"KernelRequestCount", u32}, {"KernelRequestedPeriod", u32}, {"InternalSetPeriod", u32}},
	// SystemTimeResolutionRequestRundownArgs.
	{EventTimeResolutionRequestRundown, 0}: {{"RequestedPeriod", u32}, {"Pid", u32}, {"AppNameLength", u16}, {"AppName", wstr}},
	// SystemTimerResolutionStackRundownArgs.
	{EventTimerResolutionStackRundown, 0}: {{"RequestedPeriod", u32}, {"Pid", u32}, {"AppNameLength", u16}, {"AppName", wstr}, {"StackSize", u32}, {"Stack", ptrs}},
}

// Record is one event as ETW delivers it, reduced to what the decoder
// reads: the descriptor's id and version, the header's process id and
// pointer size, and the user data.
type Record struct {
	ID      uint16
	Version uint8
	// HeaderPID is the process that logged the event
	// (EVENT_HEADER.ProcessId).
	HeaderPID uint32
	// Pointer64 is EVENT_HEADER_FLAG_64_BIT_HEADER: pointers in the
	// payload are 8 bytes (else 4).
	Pointer64 bool
	// At is the event's time stamp (EVENT_HEADER.TimeStamp).
	At      time.Time
	Payload []byte
}

// Event is a decoded timer event. Which fields are set depends on ID.
type Event struct {
	ID      uint16 `json:"id"`
	Version uint8  `json:"version"`
	// Period100ns is the requested period (63, 97, 110: 0 in 63 is a
	// release), the new period (95) or the current one (96).
	Period100ns uint32 `json:"period_100ns"`
	PID         uint32 `json:"pid"`
	AppName     string `json:"app_name"`
	// Finest100ns, Coarsest100ns, KernelRequests and KernelRequested100ns
	// are event 96's.
	Finest100ns          uint32   `json:"finest_100ns,omitempty"`
	Coarsest100ns        uint32   `json:"coarsest_100ns,omitempty"`
	KernelRequests       uint32   `json:"kernel_requests,omitempty"`
	KernelRequested100ns uint32   `json:"kernel_requested_100ns,omitempty"`
	Stack                []uint64 `json:"stack,omitempty"` // 110's
	// At is the record's time stamp.
	At time.Time `json:"-"`
}

// ErrNotTimerEvent is a record whose id and version tickscope has no
// layout for: not one of the timer events.
var ErrNotTimerEvent = errors.New("not a Kernel-Power timer event tickscope decodes")

// maxStack bounds event 110's stack: the kernel captures at most a few
// dozen frames, and a hostile count must not allocate gigabytes.
const maxStack = 1024

// Decode decodes a record's payload with its event's manifest layout. A
// payload shorter than its layout, or whose lengths point past its end,
// is an error naming the field.
func Decode(r Record) (Event, error) {
	layout, ok := layouts[layoutKey{r.ID, r.Version}]
	if !ok {
		return Event{}, fmt.Errorf("event %d version %d: %w", r.ID, r.Version, ErrNotTimerEvent)
	}
	ev := Event{ID: r.ID, Version: r.Version, PID: r.HeaderPID, At: r.At}
	values := map[string]uint32{}
	data := r.Payload
	short := func(f field) error {
		return fmt.Errorf("event %d version %d: payload of %d bytes ends inside %s", r.ID, r.Version, len(r.Payload), f.name)
	}
	var last uint32 // the previous integer field: a string's length or an array's count
	for _, f := range layout {
		switch f.typ {
		case u16:
			if len(data) < 2 {
				return Event{}, short(f)
			}
			last = uint32(binary.LittleEndian.Uint16(data))
			values[f.name], data = last, data[2:]
		case u32:
			if len(data) < 4 {
				return Event{}, short(f)
			}
			last = binary.LittleEndian.Uint32(data)
			values[f.name], data = last, data[4:]
		case wstr:
			n := int(last) * 2
			if len(data) < n {
				return Event{}, short(f)
			}
			units := make([]uint16, last)
			for i := range units {
				units[i] = binary.LittleEndian.Uint16(data[2*i:])
			}
			// The application names itself: the name is kept as it is
			// (an unpaired surrogate reads U+FFFD), and output escapes
			// what does not print where it shows it.
			ev.AppName, data = strings.TrimRight(string(utf16.Decode(units)), "\x00"), data[n:]
		case ptrs:
			size := 4
			if r.Pointer64 {
				size = 8
			}
			if last > maxStack || len(data) < int(last)*size {
				return Event{}, short(f)
			}
			ev.Stack = make([]uint64, last)
			for i := range ev.Stack {
				if size == 8 {
					ev.Stack[i] = binary.LittleEndian.Uint64(data[8*i:])
				} else {
					ev.Stack[i] = uint64(binary.LittleEndian.Uint32(data[4*i:]))
				}
			}
			data = data[int(last)*size:]
		}
	}
	for name, v := range values {
		switch name {
		case "RequestedResolution", "RequestedPeriod", "NewResolution", "CurrentPeriod":
			ev.Period100ns = v
		case "Pid":
			ev.PID = v
		case "MinimumPeriod":
			ev.Finest100ns = v
		case "MaximumPeriod":
			ev.Coarsest100ns = v
		case "KernelRequestCount":
			ev.KernelRequests = v
		case "KernelRequestedPeriod":
			ev.KernelRequested100ns = v
		}
	}
	return ev, nil
}
