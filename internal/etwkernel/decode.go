package etwkernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"
)

// Common is what every decoded event carries from its record's header.
type Common struct {
	// CPU is the processor the event was logged on.
	CPU uint16
	// At is the header's time stamp (QPC ticks in tickscope's session):
	// for a DPC or an ISR, when the routine returned.
	At int64
	// ThreadID and ProcessID are the header's: the thread and process the
	// event was logged in.
	ThreadID  uint32
	ProcessID uint32
	// Version is the class version the event came with.
	Version uint8
	// Extended says that Version is later than the one Microsoft Learn
	// documents: the documented fields were read from the front of a
	// payload at least as long as theirs, and what follows them was not.
	Extended bool
}

// Event is a decoded kernel event: *DPC, *ISR, *CSwitch, *ReadyThread or
// *ImageLoad.
type Event interface {
	Meta() Common
}

// Meta returns the event's header fields.
func (c Common) Meta() Common { return c }

// DPCKind is which of the three DPC event types an event is.
type DPCKind uint8

const (
	NormalDPC   DPCKind = OpDPC         // 68, "DPC"
	TimerDPC    DPCKind = OpTimerDPC    // 69, "TimerDPC": fired by a timer's expiration
	ThreadedDPC DPCKind = OpThreadedDPC // 66, "ThreadDPC"
)

func (k DPCKind) String() string {
	switch k {
	case TimerDPC:
		return "timer DPC"
	case ThreadedDPC:
		return "threaded DPC"
	}
	return "DPC"
}

// DPC is one DPC class event ("DPC class"), logged when the routine
// returns: its execution is [InitialTime, At].
type DPC struct {
	Common
	Kind DPCKind
	// InitialTime is the routine's entry time, in the session's clock.
	InitialTime int64
	// Routine is the routine's address (a pointer: 8 bytes on 64-bit).
	Routine uint64
}

// ISR is one ISR class event ("ISR class"), logged when the routine
// returns: its execution is [InitialTime, At].
type ISR struct {
	Common
	InitialTime int64
	Routine     uint64
	// Claimed is ReturnValue: the routine claimed the interrupt.
	Claimed bool
	// Vector is the interrupt descriptor table's vector of the routine.
	Vector uint8
	// Reserved is the documented layout's last field, kept as it is:
	// some decoders read it as the MSI message index, which Microsoft
	// Learn does not document.
	Reserved uint16
}

// CSwitch is one context switch on CPU ("CSwitch class"): from
// OldThreadID to NewThreadID at At.
type CSwitch struct {
	Common
	NewThreadID       uint32
	OldThreadID       uint32
	NewThreadPriority int8
	OldThreadPriority int8
	// PreviousCState is the C-state the processor was last in; it means
	// something only when the old thread is the idle thread (thread 0).
	PreviousCState        uint8
	SpareByte             int8
	OldThreadWaitReason   int8
	OldThreadWaitMode     int8 // 0 KernelMode, 1 UserMode
	OldThreadState        int8 // 0 Initialized ... 5 Waiting ... 7 DeferredReady
	OldThreadWaitIdealCPU int8 // OldThreadWaitIdealProcessor
	NewThreadWaitTime     uint32
	Reserved              uint32
}

// ReadyThread is one thread made ready to run ("ReadyThread class"),
// logged on the processor that readied it.
type ReadyThread struct {
	Common
	// ThreadID of the thread readied (TThreadId); Common.ThreadID is the
	// thread that readied it.
	TThreadID       uint32
	AdjustReason    int8
	AdjustIncrement int8
	// Flag: 0x1 readied from a DPC, 0x2 kernel stack swapped out, 0x4
	// process address space swapped out.
	Flag     int8
	Reserved int8
}

// ReadiedFromDPC is ReadyThread's flag 0x1.
const ReadiedFromDPC = 0x1

// ImageKind is which of the Image class's four event types an event is.
type ImageKind uint8

const (
	ImageLoaded   ImageKind = OpImageLoad    // 10, a load
	ImageUnloaded ImageKind = OpImageUnload  // 2, an unload
	ImageDCStart  ImageKind = OpImageDCStart // 3, the rundown at the session's start
	ImageDCEnd    ImageKind = OpImageDCEnd   // 4, the rundown at its end
)

// ImageLoad is one Image_Load class event ("Image_Load class").
type ImageLoad struct {
	Common
	Kind          ImageKind
	ImageBase     uint64
	ImageSize     uint64 // a size_t: pointer-sized
	ProcessID     uint32 // the process the image is loaded into (0 for drivers)
	ImageChecksum uint32
	TimeDateStamp uint32
	DefaultBase   uint64
	// FileName is the image's path as the kernel gives it (for a driver,
	// \SystemRoot\System32\drivers\x.sys and the like), kept as it is:
	// output escapes what does not print where it shows it.
	FileName string
}

// The errors of Decode.
var (
	// ErrNotDecoded is a record of a class or event type this package
	// does not decode, the undocumented PERF_TIMER payloads among them.
	ErrNotDecoded = errors.New("not a kernel event tickscope decodes")
	// ErrPointerSize is an event not logged by 64-bit Windows.
	ErrPointerSize = errors.New("not logged by 64-bit Windows")
	// ErrVersion is an event of a version older than the documented one,
	// whose layout is another.
	ErrVersion = errors.New("a version whose layout is not documented")
	// ErrSize is a payload whose length does not fit its layout.
	ErrSize = errors.New("a payload whose size does not fit its layout")
)

// DocumentedVersion is the class version whose layout Microsoft Learn
// gives: EventVersion(2) of the PerfInfo, Thread_V2 and Image classes.
const DocumentedVersion = 2

// The documented payload sizes on 64-bit Windows (MOF data is packed;
// a pointer is 8 bytes).
const (
	dpcSize         = 8 + 8             // InitialTime, Routine
	isrSize         = 8 + 8 + 1 + 1 + 2 // InitialTime, Routine, ReturnValue, Vector, Reserved
	cswitchSize     = 4 + 4 + 8*1 + 4 + 4
	readyThreadSize = 4 + 4*1
	// imageFixed is Image_Load up to FileName: ImageBase, ImageSize
	// (pointers), ProcessId, ImageChecksum, TimeDateStamp, Reserved0,
	// DefaultBase (a pointer), Reserved1 to Reserved4.
	imageFixed = 8 + 8 + 4 + 4 + 4 + 4 + 8 + 4*4
)

// Decode decodes a record of the classes and types above. The record must
// come from 64-bit Windows; at the documented version the payload must be
// exactly the documented size (Image_Load: its fixed fields then a
// NUL-terminated UTF-16 FileName ending the payload); at a later version
// at least that long, and only the documented fields are read (the
// convention of Microsoft's own TraceEvent parser, which reads later
// kernel versions as extensions of earlier ones: only real Windows can
// show that a given build keeps it). An earlier version is refused.
func Decode(r Record) (Event, error) {
	switch r.Provider {
	case PerfInfo:
		switch r.Opcode {
		case OpDPC, OpTimerDPC, OpThreadedDPC:
			return DecodeDPC(r)
		case OpISR:
			return DecodeISR(r)
		}
	case Thread:
		switch r.Opcode {
		case OpCSwitch:
			return DecodeCSwitch(r)
		case OpReadyThread:
			return DecodeReadyThread(r)
		}
	case Image:
		switch r.Opcode {
		case OpImageLoad, OpImageUnload, OpImageDCStart, OpImageDCEnd:
			return DecodeImageLoad(r)
		}
	}
	return nil, fmt.Errorf("class %v event type %d: %w", r.Provider, r.Opcode, ErrNotDecoded)
}

// check holds a record to its class, event types, pointer size, version
// and fixed size; it returns the common fields.
func check(r Record, class GUID, name string, fixed int, exact bool, ops ...uint8) (Common, error) {
	if r.Provider != class || !contains(ops, r.Opcode) {
		return Common{}, fmt.Errorf("%s: class %v event type %d: %w", name, r.Provider, r.Opcode, ErrNotDecoded)
	}
	if !r.Pointer64() {
		return Common{}, fmt.Errorf("%s: header flags %#04x: %w", name, r.Flags, ErrPointerSize)
	}
	if r.Version < DocumentedVersion {
		return Common{}, fmt.Errorf("%s version %d (documented: %d): %w", name, r.Version, DocumentedVersion, ErrVersion)
	}
	c := Common{CPU: r.CPU, At: r.TimeStamp, ThreadID: r.ThreadID, ProcessID: r.ProcessID, Version: r.Version, Extended: r.Version > DocumentedVersion}
	n := len(r.UserData)
	if n < fixed || (exact && !c.Extended && n != fixed) {
		return Common{}, fmt.Errorf("%s version %d: %d bytes, documented %d: %w", name, r.Version, n, fixed, ErrSize)
	}
	return c, nil
}

func contains(ops []uint8, op uint8) bool {
	for _, o := range ops {
		if o == op {
			return true
		}
	}
	return false
}

// DecodeDPC decodes a DPC class event (types 66, 68, 69).
func DecodeDPC(r Record) (*DPC, error) {
	c, err := check(r, PerfInfo, "DPC", dpcSize, true, OpDPC, OpTimerDPC, OpThreadedDPC)
	if err != nil {
		return nil, err
	}
	b := r.UserData
	return &DPC{Common: c, Kind: DPCKind(r.Opcode),
		InitialTime: int64(binary.LittleEndian.Uint64(b)),
		Routine:     binary.LittleEndian.Uint64(b[8:]),
	}, nil
}

// DecodeISR decodes an ISR class event (type 67).
func DecodeISR(r Record) (*ISR, error) {
	c, err := check(r, PerfInfo, "ISR", isrSize, true, OpISR)
	if err != nil {
		return nil, err
	}
	b := r.UserData
	return &ISR{Common: c,
		InitialTime: int64(binary.LittleEndian.Uint64(b)),
		Routine:     binary.LittleEndian.Uint64(b[8:]),
		Claimed:     b[16] != 0,
		Vector:      b[17],
		Reserved:    binary.LittleEndian.Uint16(b[18:]),
	}, nil
}

// DecodeCSwitch decodes a CSwitch class event (type 36).
func DecodeCSwitch(r Record) (*CSwitch, error) {
	c, err := check(r, Thread, "CSwitch", cswitchSize, true, OpCSwitch)
	if err != nil {
		return nil, err
	}
	b := r.UserData
	return &CSwitch{Common: c,
		NewThreadID:           binary.LittleEndian.Uint32(b),
		OldThreadID:           binary.LittleEndian.Uint32(b[4:]),
		NewThreadPriority:     int8(b[8]),
		OldThreadPriority:     int8(b[9]),
		PreviousCState:        b[10],
		SpareByte:             int8(b[11]),
		OldThreadWaitReason:   int8(b[12]),
		OldThreadWaitMode:     int8(b[13]),
		OldThreadState:        int8(b[14]),
		OldThreadWaitIdealCPU: int8(b[15]),
		NewThreadWaitTime:     binary.LittleEndian.Uint32(b[16:]),
		Reserved:              binary.LittleEndian.Uint32(b[20:]),
	}, nil
}

// DecodeReadyThread decodes a ReadyThread class event (type 50).
func DecodeReadyThread(r Record) (*ReadyThread, error) {
	c, err := check(r, Thread, "ReadyThread", readyThreadSize, true, OpReadyThread)
	if err != nil {
		return nil, err
	}
	b := r.UserData
	return &ReadyThread{Common: c,
		TThreadID:       binary.LittleEndian.Uint32(b),
		AdjustReason:    int8(b[4]),
		AdjustIncrement: int8(b[5]),
		Flag:            int8(b[6]),
		Reserved:        int8(b[7]),
	}, nil
}

// DecodeImageLoad decodes an Image_Load class event (types 10, 2, 3, 4).
// FileName must be NUL-terminated within the payload; at the documented
// version the terminator ends it.
func DecodeImageLoad(r Record) (*ImageLoad, error) {
	c, err := check(r, Image, "Image_Load", imageFixed+2, false, OpImageLoad, OpImageUnload, OpImageDCStart, OpImageDCEnd)
	if err != nil {
		return nil, err
	}
	b := r.UserData
	im := &ImageLoad{Common: c, Kind: ImageKind(r.Opcode),
		ImageBase:     binary.LittleEndian.Uint64(b),
		ImageSize:     binary.LittleEndian.Uint64(b[8:]),
		ProcessID:     binary.LittleEndian.Uint32(b[16:]),
		ImageChecksum: binary.LittleEndian.Uint32(b[20:]),
		TimeDateStamp: binary.LittleEndian.Uint32(b[24:]),
		DefaultBase:   binary.LittleEndian.Uint64(b[32:]),
	}
	rest := b[imageFixed:]
	end := -1
	for i := 0; i+1 < len(rest); i += 2 {
		if rest[i] == 0 && rest[i+1] == 0 {
			end = i
			break
		}
	}
	if end < 0 {
		return nil, fmt.Errorf("Image_Load version %d: FileName not terminated within %d bytes: %w", r.Version, len(b), ErrSize)
	}
	if !c.Extended && end+2 != len(rest) {
		return nil, fmt.Errorf("Image_Load version %d: %d bytes after FileName's terminator: %w", r.Version, len(rest)-end-2, ErrSize)
	}
	units := make([]uint16, end/2)
	for i := range units {
		units[i] = binary.LittleEndian.Uint16(rest[2*i:])
	}
	im.FileName = string(utf16.Decode(units))
	return im, nil
}

// BaseName is the file name of an image's path: what follows its last
// backslash or slash.
func BaseName(path string) string {
	if i := strings.LastIndexAny(path, `\/`); i >= 0 {
		return path[i+1:]
	}
	return path
}
