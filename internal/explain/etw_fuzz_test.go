package explain

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/attribution"
	"github.com/tickscope/tickscope/internal/etwkernel"
)

// FuzzETWExplainWait feeds the Windows attribution any events around one
// wait: whatever they are, the causes of a late wait are never negative
// and sum to its lateness exactly, and the unexplained part is listed.
func FuzzETWExplainWait(f *testing.F) {
	f.Add(uint16(1500), []byte{})
	f.Add(uint16(1500), []byte{2, 0, 0x20, 0x04, 60, 0, 0, 0, 3, 0, 0x64, 0x04, 0, 0, 1, 0, 1, 1, 0xf4, 0x05, 0, 0, 2, 15})
	f.Fuzz(fuzzBody)
}

// maxFuzzEvents bounds the events one input makes. The bytes past it
// would make the same test as a shorter input, and Go's fuzzer minimizes
// every new interesting input with passes quadratic in its length,
// counting none of those runs in its execs: a long input stalls the
// shown rate at 0/s for minutes.
const maxFuzzEvents = 64

func fuzzBody(t *testing.T, lateUS uint16, data []byte) {
	data = data[:min(len(data), 8*maxFuzzEvents)]
	deadline := 10 * ms
	w := waitRec{Deadline: deadline, Start: deadline - ms, End: deadline + int64(lateUS)*usec}
	evs := []etwkernel.Event{ndisImage()}
	for len(data) >= 8 {
		kind, cpu := data[0]%5, uint16(data[1]%4)
		at := deadline - 2*ms + int64(binary.LittleEndian.Uint16(data[2:]))*usec
		dur := int64(binary.LittleEndian.Uint16(data[4:])) * usec
		tid := []uint32{0, me, 99, 100}[data[6]%4]
		prio := int8(data[7])
		c := etwkernel.Common{CPU: cpu, At: at, Version: 2}
		switch kind {
		case 0:
			evs = append(evs, &etwkernel.ISR{Common: c, InitialTime: at - dur, Routine: ndisBase + uint64(dur)})
		case 1:
			evs = append(evs, &etwkernel.DPC{Common: c, InitialTime: at - dur, Routine: 0xfffff80009000000})
		case 2:
			evs = append(evs, &etwkernel.CSwitch{Common: c, NewThreadID: tid, OldThreadID: uint32(dur) % 3, NewThreadPriority: prio, PreviousCState: data[5] % 4})
		case 3:
			evs = append(evs, &etwkernel.ReadyThread{Common: c, TThreadID: tid})
		default:
			evs = append(evs, &etwkernel.ImageLoad{Common: c, Kind: etwkernel.ImageLoaded, ImageBase: 0xfffff80009000000, ImageSize: uint64(dur) + 1, FileName: "x.sys"})
		}
		data = data[8:]
	}
	tr := newETWTrace(evs, time.Millisecond)
	for _, method := range []string{"sleep", "waitable-hr"} {
		a := tr.explainWait(w, me, method)
		if a.LatenessNS != w.End-w.Deadline {
			t.Fatalf("lateness %d, want %d", a.LatenessNS, w.End-w.Deadline)
		}
		if a.LatenessNS <= 0 {
			continue
		}
		var sum int64
		unexplained := 0
		for _, c := range a.Causes {
			if c.NS < 0 {
				t.Fatalf("%s: a negative cause: %+v", method, a.Causes)
			}
			sum += c.NS
			if c.Kind == attribution.KindUnexplained {
				unexplained++
			}
		}
		if sum != a.LatenessNS {
			t.Fatalf("%s: causes sum to %d, lateness %d: %+v", method, sum, a.LatenessNS, a.Causes)
		}
		if !a.NotAttributed && unexplained != 1 {
			t.Fatalf("%s: unexplained listed %d times: %+v", method, unexplained, a.Causes)
		}
	}
}
