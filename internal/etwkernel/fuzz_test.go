package etwkernel

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// decodeAny parses and decodes, failing the test on a panic's way out
// only through the fuzzer; an accepted event must fit inside userData.
func decodeAny(t *testing.T, dec func(Record) (Event, error), h Header, userData []byte) Event {
	t.Helper()
	// A copy with no room after it: a read past the data panics.
	user := append(make([]byte, 0, len(userData)), userData...)
	r, err := ParseRecord(BuildRecord(h, len(user)), user)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := dec(r)
	if err != nil {
		return nil
	}
	if full, err := Decode(r); err != nil || !reflect.DeepEqual(full, ev) {
		t.Fatalf("Decode = %+v, %v; the class's decoder %+v", full, err, ev)
	}
	m := ev.Meta()
	if m.Version < DocumentedVersion || m.Extended != (m.Version > DocumentedVersion) {
		t.Fatalf("accepted version %d (extended %v)", m.Version, m.Extended)
	}
	return ev
}

// fuzzClass runs a decoder's fuzz target: arbitrary versions, flags and
// payloads never panic, and what is accepted has at least the documented
// size, exactly it at the documented version.
func fuzzClass[E Event](f *testing.F, decode func(Record) (E, error), class GUID, ops []uint8, fixed int, exact bool, seeds ...[]byte) {
	dec := func(r Record) (Event, error) {
		e, err := decode(r)
		if err != nil {
			return nil, err
		}
		return e, nil
	}
	for _, s := range seeds {
		for _, op := range ops {
			f.Add(op, uint8(2), uint16(classic64), s)
			f.Add(op, uint8(3), uint16(classic64), append(s, 1, 2, 3))
		}
	}
	f.Fuzz(func(t *testing.T, op, version uint8, flags uint16, user []byte) {
		if version == 0 {
			version = 1 // BuildRecord's 0 is the documented version
		}
		ev := decodeAny(t, dec, Header{Provider: class, Opcode: op, Version: version, Flags: flags}, user)
		if ev == nil {
			return
		}
		if len(user) < fixed || (exact && version == DocumentedVersion && len(user) != fixed) {
			t.Fatalf("accepted %d bytes at version %d (documented %d)", len(user), version, fixed)
		}
		if !contains(ops, op) {
			t.Fatalf("accepted event type %d", op)
		}
		// What is decoded encodes to a record that decodes the same (the
		// bytes may differ: ReturnValue is a boolean, Image_Load's
		// reserved fields are not kept).
		rec, enc, err := Encode(ev)
		if err != nil {
			t.Fatal(err)
		}
		r, err := ParseRecord(rec, enc)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := dec(r); err != nil || !reflect.DeepEqual(back, ev) {
			t.Fatalf("encoded and decoded again: %+v, %v; want %+v", back, err, ev)
		}
	})
}

func FuzzDecodeDPC(f *testing.F) {
	fuzzClass(f, DecodeDPC, PerfInfo, []uint8{OpDPC, OpTimerDPC, OpThreadedDPC}, dpcSize, true, DPCData(100, 0xfffff80001401230))
}

func FuzzDecodeISR(f *testing.F) {
	fuzzClass(f, DecodeISR, PerfInfo, []uint8{OpISR}, isrSize, true, ISRData(100, 0xfffff80001401230, true, 0x91, 0))
}

func FuzzDecodeCSwitch(f *testing.F) {
	fuzzClass(f, DecodeCSwitch, Thread, []uint8{OpCSwitch}, cswitchSize, true, CSwitchData(CSwitch{NewThreadID: 8, OldThreadID: 0, NewThreadPriority: 15, PreviousCState: 1}))
}

func FuzzDecodeReadyThread(f *testing.F) {
	fuzzClass(f, DecodeReadyThread, Thread, []uint8{OpReadyThread}, readyThreadSize, true, ReadyThreadData(ReadyThread{TThreadID: 8, Flag: ReadiedFromDPC}))
}

func FuzzDecodeImageLoad(f *testing.F) {
	fuzzClass(f, DecodeImageLoad, Image, []uint8{OpImageLoad, OpImageUnload, OpImageDCStart, OpImageDCEnd}, imageFixed+2, false,
		ImageData(ImageLoad{ImageBase: 0xfffff80001400000, ImageSize: 0x1000, FileName: `\SystemRoot\System32\drivers\ndis.sys`}),
		ImageData(ImageLoad{FileName: "\x1b]52;c;Zm9yZ2Vk\a\x1b[2K evil.sys"}))
}

// FuzzImageName: any file name a driver can have survives the round trip.
func FuzzImageName(f *testing.F) {
	f.Add(`\SystemRoot\System32\drivers\ndis.sys`)
	f.Add("é\u2028\x7f")
	f.Fuzz(func(t *testing.T, name string) {
		name = strings.ToValidUTF8(strings.ReplaceAll(name, "\x00", ""), "?")
		if utf8.RuneCountInString(name) > 1000 {
			return
		}
		in := &ImageLoad{Common: Common{Version: 2}, Kind: ImageLoaded, ImageBase: 1 << 63, ImageSize: 1, FileName: name}
		rec, user, err := Encode(in)
		if err != nil {
			t.Fatal(err)
		}
		r, err := ParseRecord(rec, user)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(r)
		if err != nil || !reflect.DeepEqual(got, in) {
			t.Fatalf("Decode = %+v, %v; want %+v", got, err, in)
		}
	})
}

// FuzzParseRecord: any bytes as an EVENT_RECORD and its user data either
// fail or decode without a panic.
func FuzzParseRecord(f *testing.F) {
	rec, user, _ := Encode(&DPC{Common: Common{Version: 2, CPU: 1, At: 10}, Kind: NormalDPC, InitialTime: 5, Routine: 1})
	f.Add(rec, user)
	f.Add(make([]byte, 112), []byte{})
	f.Fuzz(func(t *testing.T, rec, user []byte) {
		r, err := ParseRecord(rec, user)
		if err != nil {
			return
		}
		if len(r.UserData) != len(user) {
			t.Fatalf("UserData of %d bytes from %d", len(r.UserData), len(user))
		}
		Decode(r)
	})
}
