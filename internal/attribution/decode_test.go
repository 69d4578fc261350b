package attribution

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/tracefs"
)

// formats618 loads the layouts this machine's 6.18 kernel gave, kept as
// internal/tracefs's fixtures, for the events the attribution reads.
func formats618(t testing.TB) map[string]*tracefs.Format {
	t.Helper()
	dir := filepath.Join("..", "tracefs", "testdata", "6.18", "events")
	m := map[string]*tracefs.Format{}
	for _, name := range Events {
		system, event, _ := strings.Cut(name, ":")
		b, err := os.ReadFile(filepath.Join(dir, system, event, "format"))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		f, err := tracefs.ParseFormat(b)
		if err != nil {
			t.Fatal(err)
		}
		m[name] = f
	}
	if len(m) < 10 {
		t.Fatalf("only %d formats", len(m))
	}
	return m
}

// TestDecodeCapture618 decodes real ring-buffer pages of this machine and
// checks events against the kernel's own text of the same buffer
// (internal/tracefs/testdata/6.18/capture/cpu1.trace).
func TestDecodeCapture618(t *testing.T) {
	d, err := NewDecoder(formats618(t))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("..", "tracefs", "testdata", "6.18", "capture", "cpu1.raw"))
	if err != nil {
		t.Fatal(err)
	}
	var evs []Event
	for off := 0; off+4096 <= len(raw); off += 4096 {
		r, err := tracefs.ReadPage(raw[off:off+4096], tracefs.DefaultPageLayout)
		if err != nil {
			t.Fatal(err)
		}
		for r.Next() {
			e, ok, err := d.Decode(1, r.Event())
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				evs = append(evs, e)
			}
		}
	}
	if len(evs) != 502 {
		t.Errorf("%d events decoded, the capture has 502", len(evs))
	}
	// The text's first lines:
	//   bash-5365 [001] local_timer_entry: vector=236
	//   bash-5365 [001] hrtimer_expire_entry: hrtimer=... function=tick_nohz_handler
	//   bash-5365 [001] hrtimer_start: ... expires=10770324000000 softexpires=10770324000000
	//   bash-5365 [001] softirq_entry: vec=1 [action=TIMER]
	//   bash-5365 [001] sched_waking: comm=rcu_preempt pid=15 prio=120 target_cpu=001
	//   bash-5365 [001] sched_switch: prev_comm=bash prev_pid=5365 ... ==> next_comm=rcu_preempt next_pid=15
	want := []Event{
		{Kind: VectorEntry, PID: 5365, IRQ: 236, Name: "LOC"},
		{Kind: HrtimerExpireEntry, PID: 5365},
		{Kind: HrtimerStart, PID: 5365, Expires: 10770324000000, SoftExpires: 10770324000000},
		{Kind: SoftirqEntry, PID: 5365, Vec: 1, Name: "TIMER"},
		{Kind: Waking, PID: 5365, TargetPID: 15, TargetCPU: 1, Name: "rcu_preempt"},
		{Kind: Switch, PID: 5365, PrevPID: 5365, PrevComm: "bash", NextPID: 15, NextComm: "rcu_preempt"},
	}
	for i, w := range want {
		e := evs[i]
		if e.CPU != 1 || e.Kind != w.Kind || e.PID != w.PID || e.IRQ != w.IRQ || e.Name != w.Name || e.Vec != w.Vec ||
			e.Expires != w.Expires || e.SoftExpires != w.SoftExpires || e.TargetPID != w.TargetPID ||
			(w.Kind == Waking && e.TargetCPU != w.TargetCPU) || e.PrevPID != w.PrevPID || e.PrevComm != w.PrevComm ||
			e.NextPID != w.NextPID || e.NextComm != w.NextComm {
			t.Errorf("event %d: %+v, want %+v", i, e, w)
		}
	}
	if (evs[0].Time+500)/1000 != 10770320058 || evs[1].Hrtimer == 0 || evs[1].Hrtimer != evs[2].Hrtimer {
		t.Errorf("%+v %+v", evs[0], evs[1])
	}
	// prev_state=R+ (preempted), then prev_state=I and S (asleep).
	var states []bool
	for _, e := range evs[:8] {
		if e.Kind == Switch {
			states = append(states, e.Blocked())
		}
	}
	if !slices.Equal(states, []bool{false, true, true}) {
		t.Errorf("blocked %v, the text says R+, I, S", states)
	}
	kinds := map[EventKind]int{}
	for _, e := range evs {
		kinds[e.Kind]++
		if e.Kind == Migrate && (e.Name == "" || e.OrigCPU < 0 || e.TargetCPU < 0) {
			t.Errorf("migrate %+v", e)
		}
	}
	for _, k := range []EventKind{HrtimerStart, HrtimerExpireEntry, Switch, Waking, Migrate, IRQEntry, SoftirqEntry, VectorEntry} {
		if kinds[k] == 0 {
			t.Errorf("no event of kind %d", k)
		}
	}
	if !slices.IsSortedFunc(evs, func(a, b Event) int { return int(a.Time - b.Time) }) {
		t.Error("one CPU's events out of order")
	}
}

func TestNewDecoderRejects(t *testing.T) {
	f := formats618(t)
	if _, err := NewDecoder(map[string]*tracefs.Format{"workqueue:workqueue_execute_start": f["sched:sched_switch"]}); err == nil {
		t.Error("an event the attribution does not read accepted")
	}
	if _, err := NewDecoder(map[string]*tracefs.Format{"sched:sched_switch": f["sched:sched_switch"], "sched:sched_wakeup": f["sched:sched_switch"]}); err == nil {
		t.Error("two events of one ID accepted")
	}
	d, _ := NewDecoder(f)
	if _, ok, err := d.Decode(0, tracefs.Event{Type: 1, Data: []byte{1, 0}}); ok || err != nil {
		t.Errorf("an unknown type: %v %v", ok, err)
	}
	// A sched_switch record cut short is an error, not a misread.
	sw := f["sched:sched_switch"]
	if _, _, err := d.Decode(0, tracefs.Event{Type: sw.ID, Data: []byte{byte(sw.ID), byte(sw.ID >> 8), 0, 0}}); err == nil {
		t.Error("a short record decoded")
	}
}
