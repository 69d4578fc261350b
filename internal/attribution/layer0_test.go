package attribution

import (
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/procstat"
)

func TestLayer0(t *testing.T) {
	base := Layer0Wait{TID: tid, Deadline: 1_000_000, Armed: 0, Woke: 1_600_000,
		Before: procstat.SchedStat{RunNS: 10, WaitNS: 1000, Slices: 5}}
	// Runnable 450 µs of the 600 µs late: the rest is unexplained.
	w := base
	w.After = procstat.SchedStat{RunNS: 20, WaitNS: 451_000, Slices: 6}
	check(t, Layer0(w), Cause{KindRunQueue, "", "", 450_000}, Cause{KindUnexplained, "", "", 150_000})
	// More run-queue wait than lateness (it waited before the deadline
	// too): at most the lateness.
	w.After.WaitNS = 2_000_000
	check(t, Layer0(w), Cause{KindRunQueue, "", "", 600_000})
	// None: all unexplained.
	w.After.WaitNS = 1000
	check(t, Layer0(w), Cause{KindUnexplained, "", "", 600_000})
	// Another thread's counters.
	w.After = procstat.SchedStat{RunNS: 1, WaitNS: 1, Slices: 1}
	if a := Layer0(w); len(a.Reasons) == 0 || a.Causes[0].Kind != KindUnexplained {
		t.Errorf("%+v", a)
	}
	// The slack first, then the run-queue wait in what is left.
	w.After = procstat.SchedStat{RunNS: 20, WaitNS: 591_000, Slices: 6}
	w.SlackNS = 50_000
	check(t, Layer0(w), Cause{KindSlack, "", "", 50_000}, Cause{KindRunQueue, "", "", 550_000})
	w.SlackNS = 0
	// Armed late.
	w = base
	w.Armed = 1_100_000
	w.After = procstat.SchedStat{RunNS: 20, WaitNS: 451_000, Slices: 6}
	if a := Layer0(w); !a.ArmedLate || a.InheritedNS != 100_000 {
		t.Errorf("%+v", a)
	}
	check(t, Layer0(w), Cause{KindArmedLate, "", "", 600_000})
}

func TestWindowNotes(t *testing.T) {
	w := procstat.Window{
		Steal:      []procstat.StealDelta{{CPU: 0, Known: true}},
		IdleDriver: "none",
		Interrupts: procstat.TableDelta{Gone: []int{1}, Rows: []procstat.Row{{Name: "25", Partial: true}}},
	}
	n := strings.Join(WindowNotes(w), "\n")
	for _, s := range []string{"not proof", "driver none", "offline in the window: cpu1", "row 25"} {
		if !strings.Contains(n, s) {
			t.Errorf("no %q in %q", s, n)
		}
	}
	w.Steal[0].Ticks = 3
	if strings.Contains(strings.Join(WindowNotes(w), "\n"), "not proof") {
		t.Error("steal of 3 ticks said 0")
	}
}
