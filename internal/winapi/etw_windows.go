package winapi

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

// ETW constants, with their documented names (evntrace.h, evntcons.h,
// wmistr.h).
const (
	WNODE_FLAG_TRACED_GUID           = 0x00020000
	EVENT_TRACE_REAL_TIME_MODE       = 0x00000100
	EVENT_TRACE_CONTROL_STOP         = 1
	EVENT_TRACE_CONTROL_FLUSH        = 3
	EVENT_CONTROL_CODE_ENABLE        = 1 // EVENT_CONTROL_CODE_ENABLE_PROVIDER
	EVENT_CONTROL_CODE_CAPTURE_STATE = 2
	TRACE_LEVEL_INFORMATION          = 4
	PROCESS_TRACE_MODE_REAL_TIME     = 0x00000100
	PROCESS_TRACE_MODE_EVENT_RECORD  = 0x10000000
	EVENT_HEADER_FLAG_64_BIT_HEADER  = 0x0040
	// INVALID_PROCESSTRACE_HANDLE is OpenTraceW's failure on 64-bit
	// Windows ((TRACEHANDLE)INVALID_HANDLE_VALUE).
	INVALID_PROCESSTRACE_HANDLE = ^uint64(0)
)

// WnodeHeader is WNODE_HEADER (wmistr.h).
type WnodeHeader struct {
	BufferSize        uint32
	ProviderID        uint32
	HistoricalContext uint64
	TimeStamp         int64 // union with CountLost and KernelHandle
	GUID              windows.GUID
	ClientContext     uint32
	Flags             uint32
}

// EventTraceProperties is EVENT_TRACE_PROPERTIES (evntrace.h).
type EventTraceProperties struct {
	Wnode               WnodeHeader
	BufferSize          uint32
	MinimumBuffers      uint32
	MaximumBuffers      uint32
	MaximumFileSize     uint32
	LogFileMode         uint32
	FlushTimer          uint32
	EnableFlags         uint32
	AgeLimit            int32
	NumberOfBuffers     uint32
	FreeBuffers         uint32
	EventsLost          uint32
	BuffersWritten      uint32
	LogBuffersLost      uint32
	RealTimeBuffersLost uint32
	LoggerThreadID      windows.Handle
	LogFileNameOffset   uint32
	LoggerNameOffset    uint32
}

// TraceProperties is an EVENT_TRACE_PROPERTIES followed by the room the
// calls write the session's name and log file name into, as they require.
type TraceProperties struct {
	EventTraceProperties
	LoggerName  [1024]uint16
	LogFileName [1024]uint16
}

// NewTraceProperties is a properties block for a real-time session (or
// for stopping and flushing one), its sizes and offsets set.
func NewTraceProperties() *TraceProperties {
	p := &TraceProperties{}
	p.Wnode.BufferSize = uint32(unsafe.Sizeof(*p))
	p.Wnode.Flags = WNODE_FLAG_TRACED_GUID
	p.Wnode.ClientContext = 1 // QueryPerformanceCounter time stamps
	p.LogFileMode = EVENT_TRACE_REAL_TIME_MODE
	p.FlushTimer = 1 // deliver at least every second
	p.LoggerNameOffset = uint32(unsafe.Offsetof(p.LoggerName))
	p.LogFileNameOffset = uint32(unsafe.Offsetof(p.LogFileName))
	return p
}

// EventTraceHeader is EVENT_TRACE_HEADER (evntrace.h).
type EventTraceHeader struct {
	Size           uint16
	FieldTypeFlags uint16
	Version        uint32
	ThreadID       uint32
	ProcessID      uint32
	TimeStamp      int64
	GUID           windows.GUID
	ProcessorTime  uint64
}

// EventTrace is EVENT_TRACE (evntrace.h).
type EventTrace struct {
	Header           EventTraceHeader
	InstanceID       uint32
	ParentInstanceID uint32
	ParentGUID       windows.GUID
	MofData          uintptr
	MofLength        uint32
	ClientContext    uint32
}

// TraceLogfileHeader is TRACE_LOGFILE_HEADER (evntrace.h).
type TraceLogfileHeader struct {
	BufferSize         uint32
	Version            uint32
	ProviderVersion    uint32
	NumberOfProcessors uint32
	EndTime            int64
	TimerResolution    uint32
	MaximumFileSize    uint32
	LogFileMode        uint32
	BuffersWritten     uint32
	LogInstanceGUID    windows.GUID
	LoggerName         *uint16
	LogFileName        *uint16
	TimeZone           windows.Timezoneinformation
	BootTime           int64
	PerfFreq           int64
	StartTime          int64
	ReservedFlags      uint32
	BuffersLost        uint32
}

// EventTraceLogfile is EVENT_TRACE_LOGFILEW (evntrace.h).
type EventTraceLogfile struct {
	LogFileName         *uint16
	LoggerName          *uint16
	CurrentTime         int64
	BuffersRead         uint32
	ProcessTraceMode    uint32 // union with LogFileMode
	CurrentEvent        EventTrace
	LogfileHeader       TraceLogfileHeader
	BufferCallback      uintptr
	BufferSize          uint32
	Filled              uint32
	EventsLost          uint32
	EventRecordCallback uintptr // union with EventCallback
	IsKernelTrace       uint32
	Context             uintptr
}

// EventDescriptor is EVENT_DESCRIPTOR (evntprov.h).
type EventDescriptor struct {
	ID      uint16
	Version uint8
	Channel uint8
	Level   uint8
	Opcode  uint8
	Task    uint16
	Keyword uint64
}

// EventHeader is EVENT_HEADER (evntcons.h).
type EventHeader struct {
	Size            uint16
	HeaderType      uint16
	Flags           uint16
	EventProperty   uint16
	ThreadID        uint32
	ProcessID       uint32
	TimeStamp       int64
	ProviderID      windows.GUID
	EventDescriptor EventDescriptor
	ProcessorTime   uint64
	ActivityID      windows.GUID
}

// EventRecord is EVENT_RECORD (evntcons.h).
type EventRecord struct {
	EventHeader       EventHeader
	BufferContext     uint32 // ETW_BUFFER_CONTEXT
	ExtendedDataCount uint16
	UserDataLength    uint16
	ExtendedData      uintptr
	UserData          unsafe.Pointer
	UserContext       uintptr
}
