package etwkernel

import (
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	evs := append(drivers(),
		dpc(0, us(0), us(0)+5, ndis),            // 0.5 µs
		dpc(1, us(10), us(10)+us(3), ndis),      // 3 µs
		dpc(0, us(20), us(20)+us(150), ndis),    // 150 µs: over the 100 µs guidance
		isr(0, us(30), us(30)+us(30), storport), // 30 µs: over the 25 µs guidance
		isr(0, us(40), us(40)+us(2000), 0x10),   // 2 ms, in no image
		dpc(0, us(50), us(49), ndis),            // ends before it began
	)
	s, err := Summarize(evs, nil, freq)
	if err != nil {
		t.Fatal(err)
	}
	if s.Inconsistent != 1 || len(s.Drivers) != 3 {
		t.Fatalf("%+v", s)
	}
	// Worst first: the 2 ms ISR, then ndis's 150 µs DPC, then storport.
	if s.Drivers[0].Image != Unmapped || s.Drivers[1].Image != "ndis.sys" || s.Drivers[2].Image != "storport.sys" {
		t.Fatalf("order %q %q %q", s.Drivers[0].Image, s.Drivers[1].Image, s.Drivers[2].Image)
	}
	n := s.Drivers[1].DPC
	if n.Count != 3 || n.Highest != 150*time.Microsecond || n.Total != 153500*time.Nanosecond || n.Buckets != [NumBuckets]uint64{1, 1, 0, 0, 1, 0} {
		t.Errorf("ndis DPC %+v", n)
	}
	if x := s.Drivers[2].ISR; x.Count != 1 || x.Buckets != [NumBuckets]uint64{0, 0, 0, 1, 0, 0} {
		t.Errorf("storport ISR %+v", x)
	}
	if x := s.Drivers[0].ISR; x.Highest != 2*time.Millisecond || x.Buckets[NumBuckets-1] != 1 {
		t.Errorf("unmapped ISR %+v", x)
	}
	if _, err := Summarize(evs, nil, 0); err == nil {
		t.Error("QPC frequency 0 accepted")
	}
}
