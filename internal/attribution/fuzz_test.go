package attribution

import (
	"testing"

	"github.com/tickscope/tickscope/internal/procstat"
)

// events makes a trace from fuzz bytes: 6 bytes an event, on three CPUs,
// among four threads (idle, ours, two others) and two timers.
func events(b []byte) []Event {
	pids := []int{0, tid, 77, 88}
	var evs []Event
	t := int64(90)
	for len(b) >= 6 {
		k := EventKind(b[0]%uint8(CPUIdle) + 1)
		t += int64(b[1]) * 4
		e := Event{Time: t, CPU: int(b[2] % 3), Kind: k, PID: pids[b[3]%4], TargetCPU: int(b[4]%4) - 1}
		switch k {
		case HrtimerStart, HrtimerExpireEntry, HrtimerExpireExit:
			e.Hrtimer = []uint64{timer, 0x99}[b[5]%2]
		case VectorEntry, VectorExit, IRQEntry, IRQExit:
			e.IRQ, e.Name = int(b[5]%3), []string{"LOC", "RES", "eth0"}[b[5]%3]
		case SoftirqEntry, SoftirqExit:
			e.Vec = int(b[5] % 11)
		case NMI:
			e.DurationNS = int64(int8(b[5])) * 8
		case Waking, Wakeup, Migrate:
			e.TargetPID = pids[b[5]%4]
		case Switch:
			e.PrevPID, e.NextPID = pids[b[5]%4], pids[(b[5]>>2)%4]
			e.PrevComm, e.NextComm = "p", "n"
		case CPUIdle:
			e.State = int(b[5]%4) - 1
		}
		evs = append(evs, e)
		b = b[6:]
	}
	return evs
}

// FuzzExplain holds the invariant: a late wait's causes are positive and
// add up to its lateness exactly, whatever the trace says.
func FuzzExplain(f *testing.F) {
	w, b := wait(1000, 1500, 1650)
	b.timerIRQ(0, 1500, 1530, 0)
	b.sw(1600, 0, 0, "swapper/0", tid, "waiter")
	f.Add(int64(900), int64(300), int64(2000), []byte{}, []byte{0, 10, 0, 1, 1, 0, 1, 100, 0, 0, 1, 0, 12, 3, 1, 2, 2, 2})
	f.Add(int64(w.SoftExpires), w.Expires-w.SoftExpires, w.Woke, []byte{0, 0, 0}, []byte{4, 50, 1, 2, 3, 4, 5, 60, 7, 8, 9, 10})
	f.Fuzz(func(t *testing.T, soft, slack, woke int64, gapb, evb []byte) {
		if soft < 0 || slack < 0 || woke < 0 || soft > 1<<40 || slack > 1<<40 || woke > 1<<41 {
			return
		}
		w := Wait{TID: tid, CPU: 0, Hrtimer: timer, Armed: 100, SoftExpires: soft, Expires: soft + slack, Woke: woke}
		evs := NewTimeline(events(evb))
		var gaps []Gap
		if len(gapb) >= 3 {
			gaps = []Gap{{CPU: int(gapb[0] % 3), From: int64(gapb[1]) * 16, To: int64(gapb[1])*16 + int64(gapb[2])}}
		}
		for _, a := range []Attribution{Explain(w, evs, gaps), Explain(w, evs, nil)} {
			checkSum(t, a)
		}
		g := Sum([]Attribution{Explain(w, evs, nil), Explain(w, evs, gaps)})
		var total int64
		for _, s := range g.Causes {
			total += s.NS
		}
		if total != g.LatenessNS {
			t.Fatalf("aggregate causes %d, lateness %d", total, g.LatenessNS)
		}
		l0 := Layer0(Layer0Wait{TID: tid, Deadline: soft, Armed: 100, Woke: woke,
			Before: procstat.SchedStat{WaitNS: uint64(slack)}, After: procstat.SchedStat{WaitNS: uint64(slack) * 2, RunNS: 1, Slices: 1}})
		checkSum(t, l0)
	})
}

func checkSum(t *testing.T, a Attribution) {
	t.Helper()
	var sum int64
	for _, c := range a.Causes {
		if c.NS <= 0 {
			t.Fatalf("cause %+v not positive in %+v", c, a)
		}
		sum += c.NS
	}
	if a.LatenessNS > 0 && sum != a.LatenessNS {
		t.Fatalf("causes add up to %d, lateness %d: %+v", sum, a.LatenessNS, a)
	}
	if a.LatenessNS <= 0 && len(a.Causes) != 0 {
		t.Fatalf("a wait not late has causes: %+v", a)
	}
}
