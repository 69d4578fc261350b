package procstat

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/fstest"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestInterruptsThisMachine(t *testing.T) {
	tb, err := ParseInterrupts(fixture(t, "kvm-6.18/interrupts"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tb.CPUs, []int{0, 1}) {
		t.Fatalf("CPUs %v", tb.CPUs)
	}
	loc, ok := tb.Row("LOC")
	if !ok || loc.Desc != "Local timer interrupts" || loc.PerCPU[0] != 11394061 || loc.PerCPU[1] != 11244245 || loc.Total != 11394061+11244245 {
		t.Errorf("LOC %+v", loc)
	}
	irq, ok := tb.Row("36")
	if !ok || irq.Desc != "PCI-MSIX-0000:00:02.0 1-edge virtio1-req.0" || irq.PerCPU[1] != 1116449 || irq.Partial || irq.Global {
		t.Errorf("36 %+v", irq)
	}
	for _, name := range []string{"RES", "CAL", "TLB", "NMI"} {
		if r, ok := tb.Row(name); !ok || len(r.PerCPU) != 2 {
			t.Errorf("%s %+v", name, r)
		}
	}
	if r, ok := tb.Row("ERR"); !ok || !r.Global || r.Total != 0 || len(r.PerCPU) != 0 {
		t.Errorf("ERR %+v", r)
	}
}

func TestInterruptsCPUOffline(t *testing.T) {
	tb, err := ParseInterrupts(fixture(t, "edge/interrupts-cpu1-offline"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tb.CPUs, []int{0, 2, 3}) {
		t.Fatalf("CPUs %v", tb.CPUs)
	}
	// Columns are named by the header, not by their position.
	if r, _ := tb.Row("LOC"); r.PerCPU[2] != 200000 || r.PerCPU[3] != 300000 {
		t.Errorf("LOC %+v", r)
	}
	if _, has := tb.Rows[0].PerCPU[1]; has {
		t.Error("offline CPU1 has a count")
	}
	// Row 25 lost a column: the first two CPUs' counts, marked partial.
	if r, _ := tb.Row("25"); !r.Partial || r.PerCPU[0] != 10 || r.PerCPU[2] != 20 || len(r.PerCPU) != 2 || r.Desc != "PCI-MSI 1-edge eth0" {
		t.Errorf("25 %+v", r)
	}
	if r, _ := tb.Row("ERR"); !r.Global || r.Total != 3 {
		t.Errorf("ERR %+v", r)
	}
}

func TestSoftirqsThisMachine(t *testing.T) {
	tb, err := ParseSoftirqs(fixture(t, "kvm-6.18/softirqs"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU"}
	var names []string
	for _, r := range tb.Rows {
		names = append(names, r.Name)
		if len(r.PerCPU) != 2 || r.Desc != "" {
			t.Errorf("%+v", r)
		}
	}
	if !slices.Equal(names, want) {
		t.Errorf("kinds %v", names)
	}
}

func TestDeltaTable(t *testing.T) {
	before, _ := ParseInterrupts([]byte("  CPU0 CPU1\n  5: 10 20 chip a\n  6: 1 1 chip b\nLOC: 4294967290 7 Local timer interrupts\nERR: 4\n"))
	after, _ := ParseInterrupts([]byte("  CPU0 CPU1\n  5: 15 26 chip a\n  6: 2 3 chip c\n  7: 9 9 chip new\nLOC: 4 9 Local timer interrupts\nERR: 6\n"))
	d := DeltaTable(before, after)
	check := func(name string, c0, c1 uint64) {
		t.Helper()
		r, ok := d.Row(name)
		if !ok || r.PerCPU[0] != c0 || r.PerCPU[1] != c1 || r.Total != c0+c1 {
			t.Errorf("%s %+v, want %d %d", name, r, c0, c1)
		}
	}
	check("5", 5, 6)
	check("6", 2, 3)    // freed and requested again: counts from 0
	check("7", 9, 9)    // new line
	check("LOC", 10, 2) // CPU0 wrapped at 2^32
	if r, _ := d.Row("ERR"); r.Total != 2 {
		t.Errorf("ERR %+v", r)
	}
}

func TestDeltaTableHotplug(t *testing.T) {
	before, _ := ParseInterrupts([]byte("CPU0 CPU1 CPU2\nLOC: 1 2 3 x\n"))
	after, _ := ParseInterrupts([]byte("CPU0 CPU2 CPU3\nLOC: 5 7 1000 x\n"))
	d := DeltaTable(before, after)
	if !slices.Equal(d.CPUs, []int{0, 2}) || !slices.Equal(d.Gone, []int{1}) || !slices.Equal(d.Came, []int{3}) {
		t.Fatalf("%+v", d)
	}
	r, _ := d.Row("LOC")
	// CPU3's 1000 counts since boot, not this window's.
	if _, has := r.PerCPU[3]; has || !r.Partial || r.Total != 8 {
		t.Errorf("LOC %+v", r)
	}
}

func TestParseTableRejects(t *testing.T) {
	for _, in := range []string{"", "\n\n", "CPU0 CPUx\n", "CPU1 CPU0\n", "CPU0\nno colon here\n", "CPU0\nA: 1\nA: 2\n", "CPU01\n", "CPU-1\n"} {
		if _, err := ParseInterrupts([]byte(in)); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func TestStat(t *testing.T) {
	s, err := ParseStat(fixture(t, "kvm-6.18/stat"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.CPUs) != 2 || len(s.CPUs[0].Ticks) != 10 {
		t.Fatalf("%+v", s)
	}
	if st, ok := s.CPUs[1].Steal(); !ok || st != 0 {
		t.Errorf("steal %d %v", st, ok)
	}
	old, err := ParseStat(fixture(t, "edge/stat-no-steal"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := old.CPUs[0].Steal(); ok || old.CPUs[1].CPU != 2 {
		t.Errorf("%+v", old)
	}
	with, _ := ParseStat(fixture(t, "edge/stat-steal"))
	d, gone, came := DeltaSteal(old, with)
	if len(d) != 1 || d[0].CPU != 0 || d[0].Known || !slices.Equal(gone, []int{2}) || !slices.Equal(came, []int{1}) {
		t.Errorf("%+v %v %v", d, gone, came)
	}
	later, _ := ParseStat([]byte("cpu0 5 0 5 50 0 0 0 13 0 0\ncpu1 5 0 5 50 0 0 0 1 0 0\n"))
	d, _, _ = DeltaSteal(with, later)
	if !d[0].Known || d[0].Ticks != 10 || d[0].NS != 100e6 || !d[1].Reset || d[1].Known {
		t.Errorf("%+v", d)
	}
	for _, in := range []string{"", "cpu0 1 2\n", "cpu0 1 2 3 x\n", "cpux 1 2 3 4\n", "cpu1 1 2 3 4\ncpu0 1 2 3 4\n"} {
		if _, err := ParseStat([]byte(in)); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func TestSchedStat(t *testing.T) {
	s, err := ParseSchedStat(fixture(t, "kvm-6.18/schedstat"))
	if err != nil || s.RunNS == 0 || s.Slices == 0 {
		t.Fatalf("%+v %v", s, err)
	}
	fsys := fstest.MapFS{
		"proc/self/task/7/schedstat": {Data: []byte("100 20 3\n")},
		"proc/self/task/8/stat":      {Data: []byte("x")},
	}
	s, err = ReadSchedStat(fsys, 7)
	if err != nil || s != (SchedStat{100, 20, 3}) {
		t.Errorf("%+v %v", s, err)
	}
	if _, err := ReadSchedStat(fsys, 8); !errors.Is(err, ErrNoSchedInfo) {
		t.Errorf("thread without schedstat: %v", err)
	}
	if _, err := ReadSchedStat(fsys, 9); err == nil || errors.Is(err, ErrNoSchedInfo) {
		t.Errorf("no such thread: %v", err)
	}
	d, ok := SchedStat{150, 70, 5}.Sub(SchedStat{100, 20, 3})
	if !ok || d != (SchedStat{50, 50, 2}) {
		t.Errorf("%+v", d)
	}
	if _, ok := (SchedStat{1, 1, 1}).Sub(SchedStat{2, 1, 1}); ok {
		t.Error("backwards accepted")
	}
	for _, in := range []string{"", "1 2", "1 2 3 4", "1 -2 3", "a b c"} {
		if _, err := ParseSchedStat([]byte(in)); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func idleFS(usage0, time0, usage1, time1 string) fstest.MapFS {
	m := fstest.MapFS{
		"sys/devices/system/cpu/cpuidle/current_driver": {Data: []byte("haltpoll\n")},
		"sys/devices/system/cpu/cpu1/online":            {Data: []byte("1\n")}, // cpu1 has no cpuidle directory
		"sys/devices/system/cpu/cpufreq/x":              {Data: []byte("")},
	}
	for k, st := range []struct{ name, lat, usage, time string }{{"POLL", "0", usage0, time0}, {"haltpoll", "1", usage1, time1}} {
		d := "sys/devices/system/cpu/cpu0/cpuidle/state" + string(rune('0'+k)) + "/"
		m[d+"name"] = &fstest.MapFile{Data: []byte(st.name + "\n")}
		m[d+"latency"] = &fstest.MapFile{Data: []byte(st.lat + "\n")}
		m[d+"usage"] = &fstest.MapFile{Data: []byte(st.usage + "\n")}
		m[d+"time"] = &fstest.MapFile{Data: []byte(st.time + "\n")}
	}
	return m
}

func TestIdle(t *testing.T) {
	a, err := ReadIdle(idleFS("10", "100", "5", "5000"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Driver != "haltpoll" || len(a.States) != 2 || a.States[1] != (IdleState{CPU: 0, Index: 1, Name: "haltpoll", LatencyUS: 1, Usage: 5, TimeUS: 5000}) {
		t.Fatalf("%+v", a)
	}
	b, _ := ReadIdle(idleFS("12", "130", "4", "9000"))
	d := DeltaIdle(a, b)
	if len(d) != 2 || d[0].Usage != 2 || d[0].TimeUS != 30 || d[0].Reset || !d[1].Reset {
		t.Errorf("%+v", d)
	}
	// This machine: a KVM guest without a cpuidle driver.
	none := fstest.MapFS{
		"sys/devices/system/cpu/cpuidle/current_driver": {Data: fixture(t, "kvm-6.18/cpuidle_current_driver")},
		"sys/devices/system/cpu/cpu0/online":            {Data: []byte("1\n")},
	}
	n, err := ReadIdle(none)
	if err != nil || n.Driver != "none" || len(n.States) != 0 {
		t.Errorf("%+v %v", n, err)
	}
	bad := idleFS("x", "1", "1", "1")
	if _, err := ReadIdle(bad); err == nil {
		t.Error("bad usage accepted")
	}
}

func TestSnapshotDelta(t *testing.T) {
	mk := func(loc, timer, steal, usage string) fstest.MapFS {
		m := idleFS(usage, "100", "5", "5000")
		m["proc/interrupts"] = &fstest.MapFile{Data: []byte("CPU0 CPU1\nLOC: " + loc + " 1 Local timer interrupts\n")}
		m["proc/softirqs"] = &fstest.MapFile{Data: []byte("CPU0 CPU1\nTIMER: " + timer + " 1\n")}
		m["proc/stat"] = &fstest.MapFile{Data: []byte("cpu 1 1 1 1\ncpu0 1 1 1 1 0 0 0 " + steal + " 0 0\ncpu1 1 1 1 1 0 0 0 0 0 0\n")}
		return m
	}
	a, err := Read(mk("10", "3", "0", "10"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Read(mk("25", "4", "0", "11"))
	if err != nil {
		t.Fatal(err)
	}
	w := Delta(a, b)
	if r, _ := w.Interrupts.Row("LOC"); r.PerCPU[0] != 15 {
		t.Errorf("%+v", r)
	}
	if r, _ := w.Softirqs.Row("TIMER"); r.PerCPU[0] != 1 {
		t.Errorf("%+v", r)
	}
	if !w.NoSteal() || w.Idle[0].Usage != 1 || w.IdleDriver != "haltpoll" {
		t.Errorf("%+v", w)
	}
	c, _ := Read(mk("25", "4", "2", "11"))
	if Delta(b, c).NoSteal() {
		t.Error("steal of 2 ticks read as none")
	}
	if _, err := Read(fstest.MapFS{}); err == nil {
		t.Error("an empty tree read without error")
	}
}

// TestThisMachine reads the real files, where they are.
func TestThisMachine(t *testing.T) {
	if _, err := os.Stat("/proc/interrupts"); err != nil {
		t.Skip("no /proc/interrupts")
	}
	a, err := Read(Root())
	if err != nil {
		t.Fatal(err)
	}
	s, err := SelfSchedStat()
	if errors.Is(err, ErrNoSchedInfo) {
		t.Log(err)
	} else if err != nil {
		t.Fatal(err)
	} else if s.Slices == 0 {
		t.Errorf("schedstat %+v", s)
	}
	b, _ := Read(Root())
	w := Delta(a, b)
	if len(w.Interrupts.CPUs) == 0 || len(w.Steal) == 0 {
		t.Errorf("%+v", w)
	}
}
