package etwkernel

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// hdr is a hand-built 64-bit EVENT_RECORD: the offsets of evntcons.h
// written out here, not with BuildRecord, so that both are held to them.
func hdr(class GUID, opcode, version uint8, flags uint16, cpu byte, ts uint64, tid uint32, userLen int) []byte {
	b := make([]byte, 112)
	le16 := func(off int, v uint16) { b[off], b[off+1] = byte(v), byte(v>>8) }
	le32 := func(off int, v uint32) { le16(off, uint16(v)); le16(off+2, uint16(v>>16)) }
	le16(4, flags)
	le32(8, tid)
	le32(12, 4)
	le32(16, uint32(ts))
	le32(20, uint32(ts>>32))
	le32(24, class.Data1)
	le16(28, class.Data2)
	le16(30, class.Data3)
	copy(b[32:40], class.Data4[:])
	b[42] = version
	b[45] = opcode
	b[80] = cpu
	le16(86, uint16(userLen))
	return b
}

const classic64 = FlagClassicHeader | Flag64BitHeader

func TestGUIDs(t *testing.T) {
	for _, tc := range []struct {
		g    GUID
		want string
	}{
		{PerfInfo, "{ce1dbfb4-137e-4da6-87b0-3f59aa102cbc}"},
		{Thread, "{3d6fa8d1-fe05-11d0-9dda-00c04fd7ba7c}"},
		{Image, "{2cb15d1d-5fc1-11d2-abe1-00a0c911f518}"},
	} {
		if got := tc.g.String(); got != tc.want {
			t.Errorf("GUID = %s, want %s", got, tc.want)
		}
	}
}

func TestDecodeHandBuilt(t *testing.T) {
	name := []byte{'n', 0, 'd', 0, 'i', 0, 's', 0, '.', 0, 's', 0, 'y', 0, 's', 0, 0, 0}
	image := append([]byte{
		0x00, 0x00, 0x40, 0x01, 0x00, 0xf8, 0xff, 0xff, // ImageBase 0xfffff80001400000
		0x00, 0x00, 0x10, 0x00, 0, 0, 0, 0, // ImageSize 0x100000
		0, 0, 0, 0, // ProcessId
		0x78, 0x56, 0x34, 0x12, // ImageChecksum
		0x01, 0x02, 0x03, 0x04, // TimeDateStamp
		0, 0, 0, 0, // Reserved0
		0x00, 0x00, 0x40, 0x01, 0x00, 0xf8, 0xff, 0xff, // DefaultBase
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // Reserved1-4
	}, name...)
	for _, tc := range []struct {
		name string
		rec  []byte
		user []byte
		want Event
		err  error
	}{
		{
			name: "DPC (68): InitialTime, Routine",
			rec:  hdr(PerfInfo, 68, 2, classic64, 3, 1_000_250, 0, 16),
			user: []byte{0x40, 0x42, 0x0f, 0, 0, 0, 0, 0, 0x30, 0x12, 0x40, 0x01, 0x00, 0xf8, 0xff, 0xff},
			want: &DPC{Common: Common{CPU: 3, At: 1_000_250, ProcessID: 4, Version: 2}, Kind: NormalDPC, InitialTime: 1_000_000, Routine: 0xfffff80001401230},
		},
		{
			name: "timer DPC (69) on a processor past 255 (ProcessorIndex)",
			rec: func() []byte {
				b := hdr(PerfInfo, 69, 2, classic64|FlagProcessorIndex, 0x2c, 5, 0, 16)
				b[81] = 0x01 // ProcessorIndex 0x012c = 300
				return b
			}(),
			user: make([]byte, 16),
			want: &DPC{Common: Common{CPU: 300, At: 5, ProcessID: 4, Version: 2}, Kind: TimerDPC},
		},
		{
			name: "ISR (67): InitialTime, Routine, ReturnValue, Vector, Reserved",
			rec:  hdr(PerfInfo, 67, 2, classic64, 0, 900, 0, 20),
			user: []byte{0x84, 0x03, 0, 0, 0, 0, 0, 0, 0xef, 0xbe, 0xad, 0xde, 0x00, 0xf8, 0xff, 0xff, 1, 0x91, 0x02, 0x00},
			want: &ISR{Common: Common{At: 900, ProcessID: 4, Version: 2}, InitialTime: 900, Routine: 0xfffff800deadbeef, Claimed: true, Vector: 0x91, Reserved: 2},
		},
		{
			name: "CSwitch (36) from idle, C-state 2",
			rec:  hdr(Thread, 36, 2, classic64, 1, 77, 0, 24),
			user: []byte{0x34, 0x12, 0, 0, 0, 0, 0, 0, 15, 0, 2, 0, 0, 0, 2, 1, 0x10, 0, 0, 0, 0, 0, 0, 0},
			want: &CSwitch{Common: Common{CPU: 1, At: 77, ProcessID: 4, Version: 2}, NewThreadID: 0x1234, NewThreadPriority: 15, PreviousCState: 2, OldThreadState: 2, OldThreadWaitIdealCPU: 1, NewThreadWaitTime: 16},
		},
		{
			name: "ReadyThread (50), readied from a DPC, later version with more bytes",
			rec:  hdr(Thread, 50, 3, classic64, 0, 60, 0, 10),
			user: []byte{0x34, 0x12, 0, 0, 1, 2, 1, 0, 0xaa, 0xbb},
			want: &ReadyThread{Common: Common{At: 60, ProcessID: 4, Version: 3, Extended: true}, TThreadID: 0x1234, AdjustReason: 1, AdjustIncrement: 2, Flag: ReadiedFromDPC},
		},
		{
			name: "Image_Load rundown (3)",
			rec:  hdr(Image, 3, 2, classic64, 0, 1, 0, len(image)),
			user: image,
			want: &ImageLoad{Common: Common{At: 1, ProcessID: 4, Version: 2}, Kind: ImageDCStart, ImageBase: 0xfffff80001400000, ImageSize: 0x100000,
				ImageChecksum: 0x12345678, TimeDateStamp: 0x04030201, DefaultBase: 0xfffff80001400000, FileName: "ndis.sys"},
		},
		{name: "DPC one byte short", rec: hdr(PerfInfo, 68, 2, classic64, 0, 0, 0, 15), user: make([]byte, 15), err: ErrSize},
		{name: "DPC one byte long at the documented version", rec: hdr(PerfInfo, 68, 2, classic64, 0, 0, 0, 17), user: make([]byte, 17), err: ErrSize},
		{name: "DPC from 32-bit Windows", rec: hdr(PerfInfo, 68, 2, FlagClassicHeader|Flag32BitHeader, 0, 0, 0, 12), user: make([]byte, 12), err: ErrPointerSize},
		{name: "CSwitch version 1", rec: hdr(Thread, 36, 1, classic64, 0, 0, 0, 24), user: make([]byte, 24), err: ErrVersion},
		{name: "Image_Load without a terminator", rec: hdr(Image, 10, 2, classic64, 0, 0, 0, len(image)-2), user: image[:len(image)-2], err: ErrSize},
		{name: "Image_Load with bytes after its name", rec: hdr(Image, 10, 2, classic64, 0, 0, 0, len(image)+2), user: append(append([]byte{}, image...), 'x', 0), err: ErrSize},
		{name: "a PERF_TIMER event is not decoded", rec: hdr(PerfInfo, 0x49, 2, classic64, 0, 0, 0, 8), user: make([]byte, 8), err: ErrNotDecoded},
		{name: "another class", rec: hdr(GUID{Data1: 1}, 36, 2, classic64, 0, 0, 0, 24), user: make([]byte, 24), err: ErrNotDecoded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRecord(tc.rec, tc.user)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Decode(r)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Decode = %+v, %v; want %v", got, err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Decode = %+v, %v\nwant %+v", got, err, tc.want)
			}
			// Encode lays the same event out the same way.
			rec, user, err := Encode(got)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(tc.user), string(user)) {
				t.Errorf("Encode's user data % x, want a prefix of % x", user, tc.user)
			}
			r2, err := ParseRecord(rec, user)
			if err != nil {
				t.Fatal(err)
			}
			if back, err := Decode(r2); err != nil || !reflect.DeepEqual(back, got) {
				t.Errorf("decoded again = %+v, %v; want %+v", back, err, got)
			}
		})
	}
}

func TestParseRecord(t *testing.T) {
	if _, err := ParseRecord(make([]byte, 111), nil); !errors.Is(err, ErrRecord) {
		t.Errorf("a short record: %v", err)
	}
	if _, err := ParseRecord(hdr(PerfInfo, 68, 2, classic64, 0, 0, 0, 16), make([]byte, 15)); !errors.Is(err, ErrRecord) {
		t.Errorf("UserDataLength 16 with 15 bytes: %v", err)
	}
}

func TestImages(t *testing.T) {
	var m Images
	if _, ok := m.Lookup(0xfffff80000000000); ok {
		t.Fatal("an empty map found an image")
	}
	m.Add(&ImageLoad{Kind: ImageDCStart, ImageBase: 0xfffff80000000000, ImageSize: 0x1000, FileName: `\SystemRoot\system32\ntoskrnl.exe`})
	m.Add(&ImageLoad{Kind: ImageDCStart, ImageBase: 0xfffff80000100000, ImageSize: 0x1000, FileName: `\SystemRoot\System32\drivers\ndis.sys`})
	m.Add(&ImageLoad{Kind: ImageLoaded, ImageBase: 0x7ff000000000, ImageSize: 0x1000, ProcessID: 1234, FileName: `C:\x\user.dll`})
	for _, tc := range []struct {
		addr uint64
		want string
	}{
		{0xfffff80000000000, "ntoskrnl.exe"},
		{0xfffff80000000fff, "ntoskrnl.exe"},
		{0xfffff80000001000, ""},
		{0xfffff80000100800, "ndis.sys"},
		{0x7ff000000010, ""}, // user space is not kept
		{0, ""},
	} {
		if got, _ := m.Lookup(tc.addr); got != tc.want {
			t.Errorf("Lookup(%#x) = %q, want %q", tc.addr, got, tc.want)
		}
	}
	m.Add(&ImageLoad{Kind: ImageUnloaded, ImageBase: 0xfffff80000100000, ImageSize: 0x1000})
	if got, ok := m.Lookup(0xfffff80000100800); ok {
		t.Errorf("after its unload, Lookup = %q", got)
	}
}
