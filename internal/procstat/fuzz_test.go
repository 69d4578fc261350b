package procstat

import (
	"testing"
)

func FuzzParseTable(f *testing.F) {
	for _, name := range []string{"kvm-6.18/interrupts", "kvm-6.18/softirqs", "edge/interrupts-cpu1-offline", "edge/softirqs-cpu1-offline"} {
		f.Add(fixture(f, name))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tb, err := ParseInterrupts(b)
		if err != nil {
			return
		}
		d := DeltaTable(tb, tb)
		for _, r := range d.Rows {
			if r.Total != 0 {
				t.Fatalf("a table less itself: %+v", r)
			}
			for c := range r.PerCPU {
				if _, ok := tb.Row(r.Name); !ok || c < 0 {
					t.Fatalf("%+v", r)
				}
			}
		}
		if len(d.Gone)+len(d.Came) != 0 {
			t.Fatalf("%+v", d)
		}
	})
}

func FuzzParseStat(f *testing.F) {
	f.Add(fixture(f, "kvm-6.18/stat"))
	f.Add(fixture(f, "edge/stat-no-steal"))
	f.Add(fixture(f, "edge/stat-steal"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseStat(b)
		if err != nil {
			return
		}
		d, gone, came := DeltaSteal(s, s)
		if len(d) != len(s.CPUs) || len(gone)+len(came) != 0 {
			t.Fatalf("%+v", d)
		}
		for _, x := range d {
			if x.Ticks != 0 || x.Reset {
				t.Fatalf("%+v", x)
			}
		}
	})
}

func FuzzParseSchedStat(f *testing.F) {
	f.Add(fixture(f, "kvm-6.18/schedstat"))
	f.Add([]byte("0 0 0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSchedStat(b)
		if err != nil {
			return
		}
		if d, ok := s.Sub(s); !ok || d != (SchedStat{}) {
			t.Fatalf("%+v", d)
		}
	})
}

func FuzzParseIdleState(f *testing.F) {
	f.Add([]byte("C1\n"), []byte("1\n"), []byte("5\n"), []byte("5000\n"))
	f.Add([]byte("POLL"), []byte("0"), []byte("18446744073709551615"), []byte("0"))
	f.Fuzz(func(t *testing.T, name, lat, usage, tm []byte) {
		s, err := ParseIdleState(0, 0, name, lat, usage, tm)
		if err != nil {
			return
		}
		if s.Name == "" {
			t.Fatal("empty name accepted")
		}
		d := DeltaIdle(Idle{States: []IdleState{s}}, Idle{States: []IdleState{s}})
		if len(d) != 1 || d[0].Usage != 0 || d[0].TimeUS != 0 {
			t.Fatalf("%+v", d)
		}
	})
}
