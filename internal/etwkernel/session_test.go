package etwkernel

import (
	"encoding/binary"
	"testing"
	"time"
)

// The properties block at the offsets of the 64-bit EVENT_TRACE_PROPERTIES
// (evntrace.h, wmistr.h), written out here rather than taken from the
// constants Properties uses.
func TestExplainSessionProperties(t *testing.T) {
	b := ExplainSession().Properties()
	if len(b) != 120+2*2048 {
		t.Fatalf("%d bytes, want %d", len(b), 120+2*2048)
	}
	u32 := func(off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }
	for _, tc := range []struct {
		field string
		off   int
		want  uint32
	}{
		{"Wnode.BufferSize", 0, 4216},
		{"Wnode.ProviderId", 4, 0},
		{"Wnode.ClientContext (1: QPC)", 40, 1},
		{"Wnode.Flags (WNODE_FLAG_TRACED_GUID)", 44, 0x00020000},
		{"BufferSize (KB)", 48, 64},
		{"MinimumBuffers", 52, 64},
		{"MaximumBuffers", 56, 512},
		{"MaximumFileSize", 60, 0},
		{"LogFileMode (REAL_TIME | SYSTEM_LOGGER)", 64, 0x00000100 | 0x02000000},
		{"FlushTimer", 68, 1},
		{"EnableFlags (IMAGE_LOAD|CSWITCH|DPC|INTERRUPT|DISPATCHER)", 72, 0x4 | 0x10 | 0x20 | 0x40 | 0x800},
		{"AgeLimit", 76, 0},
		{"EventsLost", 88, 0},
		{"RealTimeBuffersLost", 100, 0},
		{"LogFileNameOffset (none)", 112, 0},
		{"LoggerNameOffset", 116, 120},
	} {
		if got := u32(tc.off); got != tc.want {
			t.Errorf("%s at %d = %#x, want %#x", tc.field, tc.off, got, tc.want)
		}
	}
	if g := guidAt(b[24:]); g.String() != "{37f82b1b-93bd-495a-ae8d-34a0d8847008}" {
		t.Errorf("Wnode.Guid = %v", g)
	}
	if g := guidAt(b[24:]); g == (GUID{0x9e814aad, 0x3204, 0x11d2, [8]byte{0x9a, 0x82, 0x00, 0x60, 0x08, 0xa8, 0x69, 0x39}}) {
		t.Error("Wnode.Guid is SystemTraceControlGuid: a system logger session needs a GUID of its own")
	}
	for i := 120; i < len(b); i++ {
		if b[i] != 0 {
			t.Fatalf("byte %d of the names' room = %#x: StartTraceW writes the name there", i, b[i])
		}
	}
}

func TestStopPropertiesAndLost(t *testing.T) {
	b := StopProperties()
	u32 := func(off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }
	if u32(0) != 4216 || u32(44) != 0x00020000 || u32(116) != 120 || u32(64) != 0 || u32(72) != 0 {
		t.Errorf("stop properties: size %d flags %#x name offset %d mode %#x flags %#x", u32(0), u32(44), u32(116), u32(64), u32(72))
	}
	// What ETW writes back on stop.
	binary.LittleEndian.PutUint32(b[88:], 7)
	binary.LittleEndian.PutUint32(b[100:], 2)
	if ev, rt := Lost(b); ev != 7 || rt != 2 {
		t.Errorf("Lost = %d, %d; want 7, 2", ev, rt)
	}
	if ev, rt := Lost(b[:50]); ev != 0 || rt != 0 {
		t.Errorf("Lost of a short block = %d, %d", ev, rt)
	}
}

func TestNanos(t *testing.T) {
	for _, tc := range []struct {
		count, freq, want int64
	}{
		{0, 10_000_000, 0},
		{1, 10_000_000, 100},
		{10_000_000, 10_000_000, 1_000_000_000},
		{3, 3, 1_000_000_000},
		{1, 3, 333_333_333},
		{4, 3, 1_333_333_333},
		// Days of uptime at a 10 MHz QPC: no overflow.
		{10_000_000 * 86400 * 30, 10_000_000, 86400 * 30 * 1_000_000_000},
		{5, 0, 0},
	} {
		if got := Nanos(tc.count, tc.freq); got != tc.want {
			t.Errorf("Nanos(%d, %d) = %d, want %d", tc.count, tc.freq, got, tc.want)
		}
	}
}

func TestInNanos(t *testing.T) {
	const f = 3_000_000 // 3 MHz: a count is 333.33 ns
	d := InNanos(&DPC{Common: Common{At: 30}, InitialTime: 3}, f).(*DPC)
	if d.At != 10_000 || d.InitialTime != 1000 {
		t.Errorf("DPC: %+v", d)
	}
	orig := &ISR{Common: Common{At: 6}, InitialTime: 3}
	i := InNanos(orig, f).(*ISR)
	if i.At != 2000 || i.InitialTime != 1000 || orig.At != 6 {
		t.Errorf("ISR: %+v (original %+v)", i, orig)
	}
	if c := InNanos(&CSwitch{Common: Common{At: 3}}, f).(*CSwitch); c.At != 1000 {
		t.Errorf("CSwitch: %+v", c)
	}
	if r := InNanos(&ReadyThread{Common: Common{At: 3}}, f).(*ReadyThread); r.At != 1000 {
		t.Errorf("ReadyThread: %+v", r)
	}
	if m := InNanos(&ImageLoad{Common: Common{At: 3}}, f).(*ImageLoad); m.At != 1000 {
		t.Errorf("ImageLoad: %+v", m)
	}
	// The conversion keeps a DPC's execution: 30 counts at 3 MHz.
	if got := time.Duration(d.At - d.InitialTime); got != 9*time.Microsecond {
		t.Errorf("DPC execution %v, want 9µs", got)
	}
}
