package etwkernel

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// The fixtures run at a 10 MHz QPC: one tick is 100 ns, 10 ticks 1 µs.
const freq = 10_000_000

const (
	me       = 0x1234 // the measuring thread
	ndis     = 0xfffff80001400000
	storport = 0xfffff80001600000
)

func us(n int64) int64 { return n * 10 }

func drivers() []Event {
	return []Event{
		&ImageLoad{Kind: ImageDCStart, ImageBase: ndis, ImageSize: 0x100000, FileName: `\SystemRoot\System32\drivers\ndis.sys`},
		&ImageLoad{Kind: ImageDCStart, ImageBase: storport, ImageSize: 0x100000, FileName: `\SystemRoot\System32\drivers\storport.sys`},
	}
}

func dpc(cpu uint16, from, to int64, routine uint64) *DPC {
	return &DPC{Common: Common{CPU: cpu, At: to, Version: 2}, Kind: NormalDPC, InitialTime: from, Routine: routine}
}

func isr(cpu uint16, from, to int64, routine uint64) *ISR {
	return &ISR{Common: Common{CPU: cpu, At: to, Version: 2}, InitialTime: from, Routine: routine}
}

func sw(cpu uint16, at int64, from, to uint32, prio int8, cstate uint8) *CSwitch {
	return &CSwitch{Common: Common{CPU: cpu, At: at, Version: 2}, OldThreadID: from, NewThreadID: to, NewThreadPriority: prio, PreviousCState: cstate}
}

func ready(cpu uint16, at int64) *ReadyThread {
	return &ReadyThread{Common: Common{CPU: cpu, At: at, Version: 2}, TThreadID: me, Flag: ReadiedFromDPC}
}

// A Sleep(1) from t=0 µs at a 1 ms period whose ticks fall at 0, 1000,
// 2000 µs...: the deadline is 1000 µs, the expected tick 1000 µs.
func sleep1(woke int64, events ...Event) Input {
	ticks, _ := TickTimes(0, time.Millisecond, freq, 0, us(5000))
	return Input{
		Wait:   Wait{ThreadID: me, Start: 0, Requested: time.Millisecond, Woke: woke},
		Ticks:  TickModel{Period: time.Millisecond, Ticks: ticks},
		Freq:   freq,
		Events: append(drivers(), events...),
	}
}

func TestAttributeTickModel(t *testing.T) {
	// A Sleep(1) at 15.625 ms whose deadline falls 1.2 ms after a tick
	// ends 14.425 ms after it and is not late at all.
	ticks, err := TickTimes(us(-200), 15625*time.Microsecond, freq, 0, us(40000))
	if err != nil {
		t.Fatal(err)
	}
	in := Input{Wait: Wait{ThreadID: me, Requested: time.Millisecond, Woke: us(15425)},
		Ticks: TickModel{Period: 15625 * time.Microsecond, Ticks: ticks}, Freq: freq}
	a, err := Attribute(in)
	if err != nil {
		t.Fatal(err)
	}
	if a.Lateness != 14425*time.Microsecond || a.Allowed != a.Lateness || a.Excess != 0 || !a.PhaseKnown {
		t.Errorf("on its tick: %+v", a)
	}
	// 300 µs after that tick: 300 µs excess, nothing seen to explain it.
	in.Wait.Woke += us(300)
	a, _ = Attribute(in)
	if a.Excess != 300*time.Microsecond || a.Time(Unexplained) != a.Excess {
		t.Errorf("300 µs after its tick: %+v", a)
	}
	// The phase unknown: a whole period allowed, so 14.725 ms is not
	// late, and 16 ms is 375 µs late.
	in.Ticks.Ticks = nil
	a, _ = Attribute(in)
	if a.PhaseKnown || a.Allowed != 14725*time.Microsecond || a.Excess != 0 {
		t.Errorf("phase unknown: %+v", a)
	}
	in.Wait.Woke = us(17000)
	a, _ = Attribute(in)
	if a.PhaseKnown || a.Allowed != 15625*time.Microsecond || a.Excess != 375*time.Microsecond {
		t.Errorf("phase unknown: %+v", a)
	}
	// A high-resolution timer is not rounded to a tick.
	in.Wait.HighResolution = true
	a, _ = Attribute(in)
	if a.Allowed != 0 || a.Excess != a.Lateness {
		t.Errorf("high resolution: %+v", a)
	}
}

func TestAttributeCauses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      Input
		causes  map[Cause]time.Duration
		drivers []DriverTime
		threads []ThreadTime
		remote  bool
		cstate  int
	}{
		{
			// The clock interrupt 40 µs late; in the expiry a 30 µs ndis
			// DPC, itself interrupted by a 5 µs storport ISR; the ready
			// at 1100 µs, then a priority-15 thread runs 200 µs before
			// the switch to us at 1300 µs; woke 10 µs after it.
			name: "clock late, DPC with an ISR inside, another thread",
			in: func() Input {
				in := sleep1(us(1310),
					sw(0, us(900), me, 77, 15, 0), // before the wait's end: 77 runs on CPU 0
					dpc(0, us(1050), us(1080), ndis+0x10),
					isr(0, us(1060), us(1065), storport+0x20),
					ready(0, us(1100)),
					sw(0, us(1300), 77, me, 8, 0),
				)
				in.ClockAt = us(1040)
				return in
			}(),
			causes: map[Cause]time.Duration{
				ClockLate: 40 * time.Microsecond, DPCTime: 25 * time.Microsecond, ISRTime: 5 * time.Microsecond,
				TimerExpiry: 30 * time.Microsecond, OtherThreads: 200 * time.Microsecond, Unexplained: 10 * time.Microsecond,
			},
			drivers: []DriverTime{{Image: "ndis.sys", DPC: 25 * time.Microsecond}, {Image: "storport.sys", ISR: 5 * time.Microsecond}},
			threads: []ThreadTime{{ThreadID: 77, Priority: 15, Time: 200 * time.Microsecond}},
			cstate:  -1,
		},
		{
			// The waking CPU idle in C-state 2: from the ready to the
			// switch is its exit.
			name: "idle exit",
			in: sleep1(us(1150),
				sw(1, us(500), 99, 0, 0, 0),
				ready(1, us(1000)),
				sw(1, us(1150), 0, me, 8, 2),
			),
			causes: map[Cause]time.Duration{IdleExit: 150 * time.Microsecond, Unexplained: 0},
			cstate: 2,
		},
		{
			// Readied by CPU 0, switched in on CPU 1, idle in C1: the
			// cross-processor wake-up. The clock not observed: nothing
			// before the ready is explained.
			name: "readied on another processor",
			in: sleep1(us(1100),
				sw(1, us(500), 99, 0, 0, 0),
				ready(0, us(1020)),
				sw(1, us(1100), 0, me, 8, 0),
			),
			causes: map[Cause]time.Duration{RemoteReady: 80 * time.Microsecond, Unexplained: 20 * time.Microsecond},
			remote: true,
			cstate: 0,
		},
		{
			// No events at all: everything unexplained, never hidden.
			name:   "nothing seen",
			in:     sleep1(us(1500)),
			causes: map[Cause]time.Duration{Unexplained: 500 * time.Microsecond},
			cstate: -1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Attribute(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			got := map[Cause]time.Duration{}
			var sum time.Duration
			for i, s := range a.Causes {
				got[s.Cause] = s.Time
				sum += s.Time
				if s.Time < 0 || (i > 0 && s.Time > a.Causes[i-1].Time) {
					t.Errorf("causes not worst first, or negative: %+v", a.Causes)
				}
			}
			if !reflect.DeepEqual(got, tc.causes) {
				t.Errorf("causes = %v, want %v", got, tc.causes)
			}
			if sum != a.Excess {
				t.Errorf("causes sum to %v, excess %v", sum, a.Excess)
			}
			if !reflect.DeepEqual(a.Drivers, tc.drivers) || !reflect.DeepEqual(a.Threads, tc.threads) {
				t.Errorf("drivers %+v threads %+v, want %+v %+v", a.Drivers, a.Threads, tc.drivers, tc.threads)
			}
			if remote := a.ReadyCPU >= 0 && a.WakeCPU >= 0 && a.ReadyCPU != a.WakeCPU; remote != tc.remote || a.CState != tc.cstate {
				t.Errorf("ready on %d, woke on %d, C-state %d; want remote %v, C-state %d", a.ReadyCPU, a.WakeCPU, a.CState, tc.remote, tc.cstate)
			}
		})
	}
}

func TestAttributeRefuses(t *testing.T) {
	in := sleep1(us(1500))
	in.Freq = 0
	if _, err := Attribute(in); !errors.Is(err, ErrInput) {
		t.Errorf("QPC frequency 0: %v", err)
	}
	in = sleep1(-1)
	if _, err := Attribute(in); !errors.Is(err, ErrInput) {
		t.Errorf("woke before starting: %v", err)
	}
	in = sleep1(us(9000))
	in.Ticks.Ticks = in.Ticks.Ticks[:1]
	if _, err := Attribute(in); !errors.Is(err, ErrInput) {
		t.Errorf("ticks ending before the deadline: %v", err)
	}
}

// FuzzAttribute: any events around any wait attribute without a panic,
// the causes never negative and summing to the excess, the unexplained
// part always listed.
func FuzzAttribute(f *testing.F) {
	f.Add(int64(13100), int64(10400), []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
	f.Add(int64(11000), int64(0), []byte{})
	f.Fuzz(func(t *testing.T, woke, clock int64, raw []byte) {
		var evs []Event
		for i := 0; i+3 <= len(raw) && len(evs) < 200; i += 3 {
			at := us(900) + int64(raw[i+1])*us(3)
			cpu := uint16(raw[i] & 1)
			switch raw[i] % 5 {
			case 0:
				evs = append(evs, dpc(cpu, at-int64(raw[i+2])*5, at, ndis+uint64(raw[i+2])))
			case 1:
				evs = append(evs, isr(cpu, at-int64(raw[i+2]), at, storport))
			case 2:
				evs = append(evs, sw(cpu, at, uint32(raw[i+2]%3)*me/2, uint32(raw[i+2]%4)*me/3, int8(raw[i+2]), raw[i+2]%3))
			case 3:
				evs = append(evs, ready(cpu, at))
			case 4:
				evs = append(evs, sw(cpu, at, 0, me, 8, raw[i+2]%4))
			}
		}
		in := sleep1(woke, evs...)
		in.ClockAt = clock
		a, err := Attribute(in)
		if err != nil {
			return
		}
		var sum time.Duration
		unexplained := false
		for _, s := range a.Causes {
			if s.Time < 0 {
				t.Fatalf("negative cause: %+v", a.Causes)
			}
			sum += s.Time
			unexplained = unexplained || s.Cause == Unexplained
		}
		if sum != a.Excess || !unexplained || a.Excess < 0 || a.Allowed < 0 || a.Allowed+a.Excess != a.Lateness {
			t.Fatalf("causes %+v sum %v; excess %v allowed %v lateness %v", a.Causes, sum, a.Excess, a.Allowed, a.Lateness)
		}
	})
}

func TestTickTimes(t *testing.T) {
	// 0.9766 ms is not a whole number of 100 ns ticks: no drift.
	ticks, err := TickTimes(5, 976600*time.Nanosecond, freq, 0, us(1_000_000))
	if err != nil {
		t.Fatal(err)
	}
	if len(ticks) != 1024 || ticks[0] != 5 || ticks[1023] != 5+1023*9766 {
		t.Errorf("%d ticks, first %d, last %d", len(ticks), ticks[0], ticks[len(ticks)-1])
	}
	if _, err := TickTimes(0, 0, freq, 0, 1); !errors.Is(err, ErrClock) {
		t.Errorf("period 0: %v", err)
	}
}
