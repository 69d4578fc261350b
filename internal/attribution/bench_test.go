package attribution

import "testing"

// thousandWaits is a trace of 1,000 waits of 1 ms on CPU 0, each armed,
// switched out, woken by its timer's interrupt 20 µs late and switched
// in, among a million context switches on CPU 1 (two threads taking
// turns every microsecond): what --flight-recorder's 60 s at 2 ms over
// decoded (BENCHMARKS.md).
func thousandWaits() ([]Wait, []Event) {
	const ms = 1_000_000
	var ws []Wait
	b := &tl{}
	for i := range 1000 {
		t0 := int64(i) * ms
		soft := t0 + ms/2
		ws = append(ws, Wait{TID: tid, CPU: 0, Hrtimer: timer, Armed: t0 + 100, SoftExpires: soft, Expires: soft, Woke: soft + 20_000})
		b.add(Event{Time: t0 + 100, CPU: 0, Kind: HrtimerStart, PID: tid, Hrtimer: timer, SoftExpires: soft, Expires: soft})
		b.sw(t0+110, 0, tid, "waiter", 0, "swapper/0")
		b.timerIRQ(0, soft+15_000, soft+15_100, 0)
		b.sw(soft+20_000, 0, 0, "swapper/0", tid, "waiter")
	}
	for t := int64(0); t < 1000*ms; t += 1000 {
		b.sw(t+1, 1, 2000+int(t/1000)%2, "busy", 2001-int(t/1000)%2, "busy")
	}
	Sort(b.evs)
	return ws, b.evs
}

// BenchmarkExplainThousandWaits attributes each of thousandWaits' waits.
func BenchmarkExplainThousandWaits(b *testing.B) {
	ws, evs := thousandWaits()
	tl := NewTimeline(evs)
	for b.Loop() {
		for _, w := range ws {
			if a := Explain(w, tl, nil); a.NotAttributed {
				b.Fatalf("wait at %d not attributed: %q", w.Armed, a.Reasons)
			}
		}
	}
}
