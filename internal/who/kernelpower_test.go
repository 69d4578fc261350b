package who

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// Payloads written byte by byte from the manifest's templates, not with
// Encode, so that Decode and Encode are each held to the layout.
func TestDecodeHandBuilt(t *testing.T) {
	for _, tc := range []struct {
		name string
		rec  Record
		want Event
		err  string
	}{
		{
			name: "request rundown (97): RequestedPeriod, Pid, AppNameLength, AppName",
			rec: Record{ID: 97, HeaderPID: 4, Payload: []byte{
				0x88, 0x13, 0, 0, // 5000
				0xd2, 0x04, 0, 0, // 1234
				3, 0, // 3 UTF-16 units
				'g', 0, 0xe9, 0, '!', 0, // "gé!"
			}},
			want: Event{ID: 97, Period100ns: 5000, PID: 1234, AppName: "gé!"},
		},
		{
			name: "change v1 (63): a release is period 0; SubProcessTag follows the name",
			rec: Record{ID: 63, Version: 1, HeaderPID: 4, Payload: []byte{
				0, 0, 0, 0,
				0x39, 0x30, 0, 0, // 12345
				1, 0, 'x', 0,
				7, 0, 0, 0,
			}},
			want: Event{ID: 63, Version: 1, PID: 12345, AppName: "x"},
		},
		{
			name: "change v0 (63): no Pid field, the header's process",
			rec:  Record{ID: 63, HeaderPID: 777, Payload: []byte{0x10, 0x27, 0, 0, 0, 0}},
			want: Event{ID: 63, Period100ns: 10000, PID: 777},
		},
		{
			name: "timer rundown v1 (96), with a field tickscope does not read and bytes after it",
			rec: Record{ID: 96, Version: 1, Payload: []byte{
				0x10, 0x27, 0, 0, 0x88, 0x13, 0, 0, 0x5a, 0x62, 0x02, 0, 2, 0, 0, 0, 0x10, 0x27, 0, 0, 0, 0, 0, 0, 0xff,
			}},
			want: Event{ID: 96, Version: 1, Period100ns: 10000, Finest100ns: 5000, Coarsest100ns: 156250, KernelRequests: 2, KernelRequested100ns: 10000},
		},
		{
			name: "stack rundown (110), 32-bit pointers",
			rec: Record{ID: 110, Payload: []byte{
				0x88, 0x13, 0, 0, 9, 0, 0, 0, 0, 0, // no name
				2, 0, 0, 0, 0x78, 0x56, 0x34, 0x12, 1, 0, 0, 0x80,
			}},
			want: Event{ID: 110, Period100ns: 5000, PID: 9, Stack: []uint64{0x12345678, 0x80000001}},
		},
		{
			name: "a name whose length runs past the payload",
			rec:  Record{ID: 97, Payload: []byte{0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 'a', 0}},
			err:  "ends inside AppName",
		},
		{
			name: "a stack count past the bound",
			rec:  Record{ID: 110, Pointer64: true, Payload: []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}},
			err:  "ends inside Stack",
		},
		{name: "too short for the period", rec: Record{ID: 95, Payload: []byte{1, 2}}, err: "ends inside NewResolution"},
		{name: "another event", rec: Record{ID: 41}, err: "not a Kernel-Power timer event"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode(tc.rec)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Decode = %+v, %v; want an error saying %q", got, err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Decode = %+v, %v; want %+v", got, err, tc.want)
			}
			// Encode lays the same fields out the same way.
			values := map[string]uint32{"RequestedPeriod": got.Period100ns, "RequestedResolution": got.Period100ns, "NewResolution": got.Period100ns,
				"CurrentPeriod": got.Period100ns, "Pid": got.PID, "MinimumPeriod": got.Finest100ns, "MaximumPeriod": got.Coarsest100ns,
				"KernelRequestCount": got.KernelRequests, "KernelRequestedPeriod": got.KernelRequested100ns, "SubProcessTag": 7}
			enc, err := Encode(tc.rec.ID, tc.rec.Version, tc.rec.Pointer64, values, got.AppName, got.Stack)
			if err != nil || !strings.HasPrefix(string(tc.rec.Payload), string(enc)) {
				t.Errorf("Encode = % x, %v; want a prefix of % x", enc, err, tc.rec.Payload)
			}
		})
	}
	if _, err := Decode(Record{ID: 41}); !errors.Is(err, ErrNotTimerEvent) {
		t.Errorf("Decode(event 41) error = %v, want ErrNotTimerEvent", err)
	}
}

// fuzzName makes a fuzzed string something a request's AppName can be:
// valid UTF-8 (the UTF-16 the event carries), no NUL, at most 4096 runes.
func fuzzName(s string) string {
	s = strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "?")
	if utf8.RuneCountInString(s) > 4096 {
		s = string([]rune(s)[:4096])
	}
	return s
}

// roundTrip builds a record from the layout, with trailing bytes a later
// version may add, and decodes it.
func roundTrip(t *testing.T, id uint16, version uint8, p64 bool, values map[string]uint32, name string, stack []uint64, trailing []byte) Event {
	t.Helper()
	payload, err := Encode(id, version, p64, values, name, stack)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := Decode(Record{ID: id, Version: version, Pointer64: p64, HeaderPID: 4, Payload: append(payload, trailing...)})
	if err != nil {
		t.Fatalf("Decode of a record built from the layout: %v", err)
	}
	return ev
}

func FuzzDecodeRequestRundown(f *testing.F) {
	f.Add(uint32(5000), uint32(1234), `\Device\HarddiskVolume3\Games\game.exe`, []byte{})
	f.Add(uint32(0), uint32(0), "", []byte{1, 2, 3})
	f.Add(uint32(5000), uint32(66), "\x1b]52;c;Zm9yZ2Vk\a\x1b[2K\r\u009b evil.exe\x7f", []byte{}) // kept as it is: output escapes it
	f.Fuzz(func(t *testing.T, period, pid uint32, name string, trailing []byte) {
		name = fuzzName(name)
		ev := roundTrip(t, EventTimeResolutionRequestRundown, 0, true, map[string]uint32{"RequestedPeriod": period, "Pid": pid}, name, nil, trailing)
		if ev.Period100ns != period || ev.PID != pid || ev.AppName != name {
			t.Fatalf("decoded %+v, want period %d pid %d name %q", ev, period, pid, name)
		}
	})
}

func FuzzDecodeChange(f *testing.F) {
	f.Add(uint32(10000), uint32(42), "chrome.exe", uint32(0), []byte{})
	f.Add(uint32(0), uint32(42), "", uint32(9), []byte{0})
	f.Fuzz(func(t *testing.T, period, pid uint32, name string, tag uint32, trailing []byte) {
		name = fuzzName(name)
		ev := roundTrip(t, EventTimeResolutionChange, 1, false, map[string]uint32{"RequestedResolution": period, "Pid": pid, "SubProcessTag": tag}, name, nil, trailing)
		if ev.Period100ns != period || ev.PID != pid || ev.AppName != name {
			t.Fatalf("decoded %+v, want period %d pid %d name %q", ev, period, pid, name)
		}
	})
}

func FuzzDecodeStackRundown(f *testing.F) {
	f.Add(uint32(5000), uint32(8), "a.exe", true, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add(uint32(5000), uint32(8), "", false, []byte{})
	f.Fuzz(func(t *testing.T, period, pid uint32, name string, p64 bool, frames []byte) {
		name = fuzzName(name)
		stack := make([]uint64, min(len(frames), maxStack))
		for i := range stack {
			stack[i] = uint64(frames[i]) << 40 >> 40 // fits 32 bits too
		}
		ev := roundTrip(t, EventTimerResolutionStackRundown, 0, p64, map[string]uint32{"RequestedPeriod": period, "Pid": pid}, name, stack, nil)
		if ev.Period100ns != period || ev.PID != pid || ev.AppName != name || len(ev.Stack) != len(stack) || (len(stack) > 0 && !reflect.DeepEqual(ev.Stack, stack)) {
			t.Fatalf("decoded %+v, want period %d pid %d name %q stack %v", ev, period, pid, name, stack)
		}
	})
}

// FuzzDecode feeds arbitrary payloads: Decode never panics, and a payload
// it accepts holds at least the fixed fields of its layout.
func FuzzDecode(f *testing.F) {
	for key := range layouts {
		payload, _ := Encode(key.id, key.version, true, map[string]uint32{"RequestedPeriod": 5000, "Pid": 4}, "x.exe", []uint64{1})
		f.Add(key.id, key.version, true, payload)
	}
	f.Fuzz(func(t *testing.T, id uint16, version uint8, p64 bool, payload []byte) {
		ev, err := Decode(Record{ID: id, Version: version, Pointer64: p64, Payload: payload})
		if err != nil {
			return
		}
		fixed := 0
		for _, fl := range layouts[layoutKey{id, version}] {
			switch fl.typ {
			case u16:
				fixed += 2
			case u32:
				fixed += 4
			}
		}
		if len(payload) < fixed || len(ev.Stack) > maxStack {
			t.Fatalf("accepted %d bytes for event %d v%d (fixed fields need %d): %+v", len(payload), id, version, fixed, ev)
		}
	})
}
