package etwkernel

import (
	"encoding/binary"
	"time"
)

// The session tickscope explain starts to receive these events: a
// private system logger session, not the NT Kernel Logger.
//
// "Configuring and Starting a SystemTraceProvider Session" (Microsoft
// Learn): on Windows 8 and later the SystemTraceProvider feeds up to 8
// logger sessions; one other than the NT Kernel Logger sets
// EVENT_TRACE_SYSTEM_LOGGER_MODE in LogFileMode, a private LoggerName,
// and a Wnode.Guid of its own ("must be assigned a new GUID", not
// SystemTraceControlGuid). The NT Kernel Logger is one per machine, held
// by WPR, xperf or LatencyMon while they run, and stopping it would stop
// theirs; tickscope's binaries need Windows 10 (Go 1.22 and later), so a
// Windows where the system logger mode is missing never runs them, and
// there is no NT Kernel Logger fallback.
const SessionName = "tickscope-explain"

// SessionGUID is the session's own Wnode.Guid,
// {37f82b1b-93bd-495a-ae8d-34a0d8847008}, made for tickscope.
var SessionGUID = GUID{0x37f82b1b, 0x93bd, 0x495a, [8]byte{0xae, 0x8d, 0x34, 0xa0, 0xd8, 0x84, 0x70, 0x08}}

// EnableFlags of EVENT_TRACE_PROPERTIES ("EVENT_TRACE_PROPERTIES
// structure (evntrace.h)", Microsoft Learn), the kernel events explain
// decodes.
const (
	FlagImageLoad  = 0x00000004 // EVENT_TRACE_FLAG_IMAGE_LOAD: Image_Load, its rundown at the start
	FlagCSwitch    = 0x00000010 // EVENT_TRACE_FLAG_CSWITCH
	FlagDPC        = 0x00000020 // EVENT_TRACE_FLAG_DPC: DPC, timer DPC, threaded DPC
	FlagInterrupt  = 0x00000040 // EVENT_TRACE_FLAG_INTERRUPT: ISR
	FlagDispatcher = 0x00000800 // EVENT_TRACE_FLAG_DISPATCHER: ReadyThread
)

// LogFileMode values (the same page; "Logging Mode Constants").
const (
	ModeRealTime     = 0x00000100 // EVENT_TRACE_REAL_TIME_MODE
	ModeSystemLogger = 0x02000000 // EVENT_TRACE_SYSTEM_LOGGER_MODE
)

// WnodeFlagTracedGUID is WNODE_HEADER.Flags' WNODE_FLAG_TRACED_GUID
// ("WNODE_HEADER structure", Microsoft Learn): required for a session.
const WnodeFlagTracedGUID = 0x00020000

// ClientContextQPC is WNODE_HEADER.ClientContext 1: the session's time
// stamps are QueryPerformanceCounter counts, the clock of tickscope's
// samples and of the InitialTime in a DPC's or ISR's payload.
const ClientContextQPC = 1

// SessionConfig is what EVENT_TRACE_PROPERTIES says of a real-time
// session; Properties lays it out.
type SessionConfig struct {
	GUID          GUID
	ClientContext uint32
	// BufferSizeKB is each buffer's size; MinimumBuffers and
	// MaximumBuffers how many ETW allocates; FlushTimer the seconds after
	// which a buffer that is not full is delivered.
	BufferSizeKB, MinimumBuffers, MaximumBuffers, FlushTimer uint32
	LogFileMode, EnableFlags                                 uint32
}

// ExplainSession is explain's session: real time, a system logger of its
// own, QPC time stamps, and DPC, ISR, CSwitch, ReadyThread and image
// events. CSwitch alone can reach tens of thousands of events a second on
// a busy machine: 64 KB buffers, at least 64 and at most 512 of them
// (32 MB), delivered at least every second.
func ExplainSession() SessionConfig {
	return SessionConfig{
		GUID:          SessionGUID,
		ClientContext: ClientContextQPC,
		BufferSizeKB:  64, MinimumBuffers: 64, MaximumBuffers: 512, FlushTimer: 1,
		LogFileMode: ModeRealTime | ModeSystemLogger,
		EnableFlags: FlagImageLoad | FlagCSwitch | FlagDPC | FlagInterrupt | FlagDispatcher,
	}
}

// The 64-bit EVENT_TRACE_PROPERTIES ("EVENT_TRACE_PROPERTIES structure
// (evntrace.h)"): a 48-byte WNODE_HEADER, then the session's fields, 120
// bytes; internal/winapi's TraceProperties follows it with room for the
// session's name and a log file's, 1024 UTF-16 units each, which the
// calls write into.
const (
	PropertiesSize     = 120
	nameRoom           = 1024 * 2
	PropertiesWithRoom = PropertiesSize + 2*nameRoom

	propBufferSizeTotal    = 0  // Wnode.BufferSize: the whole block
	propGUID               = 24 // Wnode.Guid
	propClientContext      = 40 // Wnode.ClientContext
	propWnodeFlags         = 44 // Wnode.Flags
	propBufferSize         = 48
	propMinimumBuffers     = 52
	propMaximumBuffers     = 56
	propLogFileMode        = 64
	propFlushTimer         = 68
	propEnableFlags        = 72
	propEventsLost         = 88
	propRealTimeBufferLost = 100
	propLogFileNameOffset  = 112
	propLoggerNameOffset   = 116
)

// Properties lays out the EVENT_TRACE_PROPERTIES block StartTraceW is
// given, PropertiesWithRoom bytes: the name's room right after the
// structure (StartTraceW copies the name there itself), no log file
// (LogFileNameOffset 0: a real-time session writes none).
func (c SessionConfig) Properties() []byte {
	b := make([]byte, PropertiesWithRoom)
	le := binary.LittleEndian
	le.PutUint32(b[propBufferSizeTotal:], PropertiesWithRoom)
	putGUID(b[propGUID:], c.GUID)
	le.PutUint32(b[propClientContext:], c.ClientContext)
	le.PutUint32(b[propWnodeFlags:], WnodeFlagTracedGUID)
	le.PutUint32(b[propBufferSize:], c.BufferSizeKB)
	le.PutUint32(b[propMinimumBuffers:], c.MinimumBuffers)
	le.PutUint32(b[propMaximumBuffers:], c.MaximumBuffers)
	le.PutUint32(b[propLogFileMode:], c.LogFileMode)
	le.PutUint32(b[propFlushTimer:], c.FlushTimer)
	le.PutUint32(b[propEnableFlags:], c.EnableFlags)
	le.PutUint32(b[propLogFileNameOffset:], 0)
	le.PutUint32(b[propLoggerNameOffset:], PropertiesSize)
	return b
}

// StopProperties is the block ControlTraceW is given to stop or query a
// session by name: only the sizes and the name's room set; ETW fills in
// the rest, the counts of what was lost among them (Lost reads them).
func StopProperties() []byte {
	b := make([]byte, PropertiesWithRoom)
	binary.LittleEndian.PutUint32(b[propBufferSizeTotal:], PropertiesWithRoom)
	binary.LittleEndian.PutUint32(b[propWnodeFlags:], WnodeFlagTracedGUID)
	binary.LittleEndian.PutUint32(b[propLoggerNameOffset:], PropertiesSize)
	return b
}

// Lost reads what a stopped or queried session's properties say was
// lost: EventsLost (events the session could not log) and
// RealTimeBuffersLost (buffers its consumer could not be given).
func Lost(props []byte) (events, realTimeBuffers uint32) {
	if len(props) < PropertiesSize {
		return 0, 0
	}
	return binary.LittleEndian.Uint32(props[propEventsLost:]), binary.LittleEndian.Uint32(props[propRealTimeBufferLost:])
}

// Nanos converts a QPC count at freq counts a second to nanoseconds as
// internal/winapi's QPCNanos does (the count split before scaling, so
// that it cannot overflow after days of uptime), so that an event's time
// and a sample's time are the same number for the same instant.
func Nanos(count, freq int64) int64 {
	if freq <= 0 {
		return 0
	}
	return count/freq*int64(time.Second) + count%freq*int64(time.Second)/freq
}

// InNanos is ev with its times (the header's time stamp, and a DPC's or
// ISR's InitialTime) converted from QPC counts at freq by Nanos: a copy,
// for Attribute and Summarize at a frequency of 1e9 on the samples'
// clock. Other events come back as they are.
func InNanos(ev Event, freq int64) Event {
	switch e := ev.(type) {
	case *DPC:
		c := *e
		c.At, c.InitialTime = Nanos(c.At, freq), Nanos(c.InitialTime, freq)
		return &c
	case *ISR:
		c := *e
		c.At, c.InitialTime = Nanos(c.At, freq), Nanos(c.InitialTime, freq)
		return &c
	case *CSwitch:
		c := *e
		c.At = Nanos(c.At, freq)
		return &c
	case *ReadyThread:
		c := *e
		c.At = Nanos(c.At, freq)
		return &c
	case *ImageLoad:
		c := *e
		c.At = Nanos(c.At, freq)
		return &c
	}
	return ev
}
