package etwkernel

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// GUID is a GUID as Windows lays it out in memory (GUID, guiddef.h):
// Data1, Data2 and Data3 little-endian, Data4 as bytes.
type GUID struct {
	Data1 uint32
	Data2 uint16
	Data3 uint16
	Data4 [8]byte
}

// String writes the GUID as the MOF classes do, braces included.
func (g GUID) String() string {
	return fmt.Sprintf("{%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x}",
		g.Data1, g.Data2, g.Data3, g.Data4[0], g.Data4[1], g.Data4[2], g.Data4[3], g.Data4[4], g.Data4[5], g.Data4[6], g.Data4[7])
}

func guidAt(b []byte) GUID {
	var g GUID
	g.Data1 = binary.LittleEndian.Uint32(b)
	g.Data2 = binary.LittleEndian.Uint16(b[4:])
	g.Data3 = binary.LittleEndian.Uint16(b[6:])
	copy(g.Data4[:], b[8:16])
	return g
}

func putGUID(b []byte, g GUID) {
	binary.LittleEndian.PutUint32(b, g.Data1)
	binary.LittleEndian.PutUint16(b[4:], g.Data2)
	binary.LittleEndian.PutUint16(b[6:], g.Data3)
	copy(b[8:16], g.Data4[:])
}

// The event classes this package decodes, by the GUIDs of their MOF
// parent classes on Microsoft Learn. A classic kernel event arrives with
// its class's GUID as EVENT_HEADER.ProviderId and its event type as
// EVENT_DESCRIPTOR.Opcode.
var (
	// PerfInfo is the PerfInfo class, {ce1dbfb4-137e-4da6-87b0-3f59aa102cbc}
	// ("PerfInfo class"): DPC and ISR events (and the sampled profile,
	// system calls and the undocumented PERF_TIMER events, which are not
	// decoded).
	PerfInfo = GUID{0xce1dbfb4, 0x137e, 0x4da6, [8]byte{0x87, 0xb0, 0x3f, 0x59, 0xaa, 0x10, 0x2c, 0xbc}}
	// Thread is the Thread_V2 class, {3d6fa8d1-fe05-11d0-9dda-00c04fd7ba7c}
	// ("Thread_V2 class"): CSwitch and ReadyThread.
	Thread = GUID{0x3d6fa8d1, 0xfe05, 0x11d0, [8]byte{0x9d, 0xda, 0x00, 0xc0, 0x4f, 0xd7, 0xba, 0x7c}}
	// Image is the Image class, {2cb15d1d-5fc1-11d2-abe1-00a0c911f518}
	// ("Image class"; evntrace.h's ImageLoadGuid): Image_Load.
	Image = GUID{0x2cb15d1d, 0x5fc1, 0x11d2, [8]byte{0xab, 0xe1, 0x00, 0xa0, 0xc9, 0x11, 0xf5, 0x18}}
)

// The event types (opcodes) decoded, by class.
const (
	// PerfInfo ("PerfInfo class", "DPC class", "ISR class").
	OpThreadedDPC = 66
	OpISR         = 67
	OpDPC         = 68
	OpTimerDPC    = 69
	// Thread_V2 ("Thread_V2 class", "CSwitch class", "ReadyThread class").
	OpCSwitch     = 36
	OpReadyThread = 50
	// Image ("Image class"): EVENT_TRACE_TYPE_LOAD, _END, _DC_START and
	// _DC_END, all laid out as Image_Load.
	OpImageUnload  = 2
	OpImageDCStart = 3
	OpImageDCEnd   = 4
	OpImageLoad    = 10
)

// EVENT_HEADER.Flags tickscope reads ("EVENT_HEADER structure
// (evntcons.h)").
const (
	FlagClassicHeader  = 0x0100 // EVENT_HEADER_FLAG_CLASSIC_HEADER
	Flag32BitHeader    = 0x0020 // EVENT_HEADER_FLAG_32_BIT_HEADER
	Flag64BitHeader    = 0x0040 // EVENT_HEADER_FLAG_64_BIT_HEADER
	FlagProcessorIndex = 0x0200 // EVENT_HEADER_FLAG_PROCESSOR_INDEX
)

// The 64-bit EVENT_RECORD ("EVENT_RECORD structure (evntcons.h)"): an
// 80-byte EVENT_HEADER, the 4-byte ETW_BUFFER_CONTEXT, ExtendedDataCount
// and UserDataLength (2 bytes each), then three pointers (ExtendedData,
// UserData, UserContext). internal/winapi holds its Go struct to the same
// offsets at compile time.
const (
	RecordSize = 112

	offSize          = 0
	offFlags         = 4
	offEventProperty = 6
	offThreadID      = 8
	offProcessID     = 12
	offTimeStamp     = 16
	offProviderID    = 24
	offID            = 40
	offVersion       = 42
	offChannel       = 43
	offLevel         = 44
	offOpcode        = 45
	offTask          = 46
	offKeyword       = 48
	offProcessorNum  = 80 // ETW_BUFFER_CONTEXT.ProcessorNumber, or ProcessorIndex (2 bytes)
	offLoggerID      = 82
	offUserDataLen   = 86
	offUserDataPtr   = 96
)

// Record is one EVENT_RECORD reduced to what the decoders read, with its
// user data. UserData aliases the bytes given to ParseRecord: ETW owns
// them only for the callback's life, and the decoders copy what they keep.
type Record struct {
	Flags     uint16
	ThreadID  uint32 // EVENT_HEADER.ThreadId: the thread the event was logged on
	ProcessID uint32
	// TimeStamp is EVENT_HEADER.TimeStamp. It is QPC ticks only when the
	// session was started with Wnode.ClientContext = 1 and is consumed
	// with PROCESS_TRACE_MODE_RAW_TIMESTAMP ("EVENT_HEADER structure");
	// otherwise ETW converts it to system time, and it can no longer be
	// compared with the InitialTime in a DPC's or ISR's payload.
	TimeStamp int64
	Provider  GUID
	ID        uint16
	Version   uint8
	Level     uint8
	Opcode    uint8
	Task      uint16
	Keyword   uint64
	// CPU is the processor that logged the event: ETW_BUFFER_CONTEXT's
	// ProcessorIndex when the header says EVENT_HEADER_FLAG_PROCESSOR_INDEX,
	// else its one-byte ProcessorNumber.
	CPU      uint16
	LoggerID uint16
	UserData []byte
}

// Pointer64 says that the event was logged by 64-bit Windows: its
// pointers are 8 bytes.
func (r Record) Pointer64() bool {
	return r.Flags&Flag64BitHeader != 0 && r.Flags&Flag32BitHeader == 0
}

// ErrRecord is an EVENT_RECORD whose bytes do not hold together.
var ErrRecord = errors.New("not a 64-bit EVENT_RECORD")

// ParseRecord reads a 64-bit EVENT_RECORD's bytes (the first RecordSize
// bytes of rec) and the user data it points to. UserDataLength must be
// the length of userData: the Windows consumer slices UserData by it.
func ParseRecord(rec, userData []byte) (Record, error) {
	if len(rec) < RecordSize {
		return Record{}, fmt.Errorf("%w: %d bytes, want %d", ErrRecord, len(rec), RecordSize)
	}
	if n := int(binary.LittleEndian.Uint16(rec[offUserDataLen:])); n != len(userData) {
		return Record{}, fmt.Errorf("%w: UserDataLength %d but %d bytes of user data", ErrRecord, n, len(userData))
	}
	r := Record{
		Flags:     binary.LittleEndian.Uint16(rec[offFlags:]),
		ThreadID:  binary.LittleEndian.Uint32(rec[offThreadID:]),
		ProcessID: binary.LittleEndian.Uint32(rec[offProcessID:]),
		TimeStamp: int64(binary.LittleEndian.Uint64(rec[offTimeStamp:])),
		Provider:  guidAt(rec[offProviderID:]),
		ID:        binary.LittleEndian.Uint16(rec[offID:]),
		Version:   rec[offVersion],
		Level:     rec[offLevel],
		Opcode:    rec[offOpcode],
		Task:      binary.LittleEndian.Uint16(rec[offTask:]),
		Keyword:   binary.LittleEndian.Uint64(rec[offKeyword:]),
		LoggerID:  binary.LittleEndian.Uint16(rec[offLoggerID:]),
		UserData:  userData,
	}
	if r.Flags&FlagProcessorIndex != 0 {
		r.CPU = binary.LittleEndian.Uint16(rec[offProcessorNum:])
	} else {
		r.CPU = uint16(rec[offProcessorNum])
	}
	return r, nil
}
