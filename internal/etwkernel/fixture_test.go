package etwkernel

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"time"
	"unicode/utf16"
)

// Header is what a synthetic EVENT_RECORD's header says: the fixtures of
// the tests.
type Header struct {
	Provider GUID
	Opcode   uint8
	Version  uint8 // 0: DocumentedVersion
	// Flags 0: EVENT_HEADER_FLAG_CLASSIC_HEADER | _64_BIT_HEADER, what a
	// classic kernel event from 64-bit Windows carries.
	Flags     uint16
	CPU       uint16
	TimeStamp int64
	ThreadID  uint32
	ProcessID uint32
	LoggerID  uint16
}

// BuildRecord lays out the EVENT_RECORD of a 64-bit Windows for h and a
// payload of userLen bytes, as ProcessTrace hands it to the callback:
// the 80-byte EVENT_HEADER (Size, Flags, the ids, TimeStamp, ProviderId,
// the EVENT_DESCRIPTOR with the event type as Opcode), the
// ETW_BUFFER_CONTEXT, UserDataLength, and pointers that mean nothing
// here (UserData's is a stand-in, never followed).
func BuildRecord(h Header, userLen int) []byte {
	if h.Version == 0 {
		h.Version = DocumentedVersion
	}
	if h.Flags == 0 {
		h.Flags = FlagClassicHeader | Flag64BitHeader
	}
	b := make([]byte, RecordSize)
	// EVENT_HEADER.Size is the event's size in the buffer; nothing here
	// reads it.
	binary.LittleEndian.PutUint16(b[offSize:], uint16(80+userLen))
	binary.LittleEndian.PutUint16(b[offFlags:], h.Flags)
	binary.LittleEndian.PutUint16(b[offEventProperty:], 0x4) // EVENT_HEADER_PROPERTY_LEGACY_EVENTLOG: a MOF class parses it
	binary.LittleEndian.PutUint32(b[offThreadID:], h.ThreadID)
	binary.LittleEndian.PutUint32(b[offProcessID:], h.ProcessID)
	binary.LittleEndian.PutUint64(b[offTimeStamp:], uint64(h.TimeStamp))
	putGUID(b[offProviderID:], h.Provider)
	b[offVersion] = h.Version
	b[offOpcode] = h.Opcode
	if h.Flags&FlagProcessorIndex != 0 {
		binary.LittleEndian.PutUint16(b[offProcessorNum:], h.CPU)
	} else {
		b[offProcessorNum] = byte(h.CPU)
		b[offProcessorNum+1] = 8 // Alignment: "always eight"
	}
	binary.LittleEndian.PutUint16(b[offLoggerID:], h.LoggerID)
	binary.LittleEndian.PutUint16(b[offUserDataLen:], uint16(userLen))
	binary.LittleEndian.PutUint64(b[offUserDataPtr:], 0xfffff00000001000)
	return b
}

// DPCData is a DPC class payload.
func DPCData(initialTime int64, routine uint64) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(initialTime))
	return binary.LittleEndian.AppendUint64(b, routine)
}

// ISRData is an ISR class payload.
func ISRData(initialTime int64, routine uint64, claimed bool, vector uint8, reserved uint16) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(initialTime))
	b = binary.LittleEndian.AppendUint64(b, routine)
	var ret byte
	if claimed {
		ret = 1
	}
	b = append(b, ret, vector)
	return binary.LittleEndian.AppendUint16(b, reserved)
}

// CSwitchData is a CSwitch class payload.
func CSwitchData(c CSwitch) []byte {
	b := binary.LittleEndian.AppendUint32(nil, c.NewThreadID)
	b = binary.LittleEndian.AppendUint32(b, c.OldThreadID)
	b = append(b, byte(c.NewThreadPriority), byte(c.OldThreadPriority), c.PreviousCState, byte(c.SpareByte),
		byte(c.OldThreadWaitReason), byte(c.OldThreadWaitMode), byte(c.OldThreadState), byte(c.OldThreadWaitIdealCPU))
	b = binary.LittleEndian.AppendUint32(b, c.NewThreadWaitTime)
	return binary.LittleEndian.AppendUint32(b, c.Reserved)
}

// ReadyThreadData is a ReadyThread class payload.
func ReadyThreadData(r ReadyThread) []byte {
	b := binary.LittleEndian.AppendUint32(nil, r.TThreadID)
	return append(b, byte(r.AdjustReason), byte(r.AdjustIncrement), byte(r.Flag), byte(r.Reserved))
}

// ImageData is an Image_Load class payload, FileName NUL-terminated.
func ImageData(im ImageLoad) []byte {
	b := binary.LittleEndian.AppendUint64(nil, im.ImageBase)
	b = binary.LittleEndian.AppendUint64(b, im.ImageSize)
	b = binary.LittleEndian.AppendUint32(b, im.ProcessID)
	b = binary.LittleEndian.AppendUint32(b, im.ImageChecksum)
	b = binary.LittleEndian.AppendUint32(b, im.TimeDateStamp)
	b = binary.LittleEndian.AppendUint32(b, 0) // Reserved0
	b = binary.LittleEndian.AppendUint64(b, im.DefaultBase)
	b = append(b, make([]byte, 16)...) // Reserved1 to Reserved4
	for _, u := range utf16.Encode([]rune(im.FileName)) {
		b = binary.LittleEndian.AppendUint16(b, u)
	}
	return append(b, 0, 0)
}

// Encode builds the record and payload Windows would deliver for a
// decoded event: the inverse of ParseRecord then Decode.
func Encode(ev Event) (rec, userData []byte, err error) {
	m := ev.Meta()
	h := Header{Version: m.Version, CPU: m.CPU, TimeStamp: m.At, ThreadID: m.ThreadID, ProcessID: m.ProcessID}
	if h.CPU > 0xff {
		h.Flags = FlagClassicHeader | Flag64BitHeader | FlagProcessorIndex
	}
	switch e := ev.(type) {
	case *DPC:
		h.Provider, h.Opcode = PerfInfo, uint8(e.Kind)
		userData = DPCData(e.InitialTime, e.Routine)
	case *ISR:
		h.Provider, h.Opcode = PerfInfo, OpISR
		userData = ISRData(e.InitialTime, e.Routine, e.Claimed, e.Vector, e.Reserved)
	case *CSwitch:
		h.Provider, h.Opcode = Thread, OpCSwitch
		userData = CSwitchData(*e)
	case *ReadyThread:
		h.Provider, h.Opcode = Thread, OpReadyThread
		userData = ReadyThreadData(*e)
	case *ImageLoad:
		h.Provider, h.Opcode = Image, uint8(e.Kind)
		userData = ImageData(*e)
	default:
		return nil, nil, fmt.Errorf("encode %T: %w", ev, ErrNotDecoded)
	}
	if len(userData) > 0xffff {
		return nil, nil, fmt.Errorf("encode: %d bytes of user data: %w", len(userData), ErrSize)
	}
	return BuildRecord(h, len(userData)), userData, nil
}

// TickTimes are the clock's ticks from phase on, every period, that fall
// in [from, to] (QPC ticks at freq): the tick model's input when the
// period in force and one tick's time are known. Tick k is at
// phase + k·period rounded to the nearest QPC tick, so that a period that
// is not a whole number of QPC ticks does not drift.
func TickTimes(phase int64, period time.Duration, freq, from, to int64) ([]int64, error) {
	if period <= 0 || freq <= 0 || to < from {
		return nil, ErrClock
	}
	// k·period·freq/1e9 in 128 bits: k is bounded by the span.
	at := func(k uint64) (int64, bool) {
		hi, lo := bits.Mul64(k, uint64(period))
		if hi != 0 {
			return 0, false
		}
		hi, lo = bits.Mul64(lo, uint64(freq))
		if hi >= uint64(time.Second) {
			return 0, false
		}
		q, r := bits.Div64(hi, lo, uint64(time.Second))
		if 2*r >= uint64(time.Second) {
			q++
		}
		if q > math.MaxInt64-uint64(max(phase, 0)) {
			return 0, false
		}
		return phase + int64(q), true
	}
	var k uint64
	if from > phase {
		// Start just before from: k = floor((from-phase)·1e9 / (period·freq)).
		span := toDuration(from-phase, freq)
		k = uint64(span / period)
		if k > 0 {
			k--
		}
	}
	const maxTicks = 1 << 20
	var out []int64
	for n := 0; n < maxTicks+2; n++ {
		t, ok := at(k)
		if !ok || t > to {
			break
		}
		if t >= from {
			out = append(out, t)
			if len(out) > maxTicks {
				return nil, ErrClock
			}
		}
		k++
	}
	return out, nil
}

// Time is the time of cause c.
func (a Attribution) Time(c Cause) time.Duration {
	for _, s := range a.Causes {
		if s.Cause == c {
			return s.Time
		}
	}
	return 0
}
