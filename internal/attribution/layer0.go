package attribution

import (
	"strconv"
	"strings"

	"github.com/tickscope/tickscope/internal/procstat"
)

// Layer0Wait is one wait as a thread sees it without tracing: its
// deadline, when it began and woke, its schedstat read before it began
// and after it woke, and its timer slack (prctl PR_GET_TIMERSLACK; 0 for
// a real-time thread, whose slack the kernel ignores).
type Layer0Wait struct {
	TID                   int
	Deadline, Armed, Woke int64
	Before, After         procstat.SchedStat
	SlackNS               int64
}

// Layer0 attributes a wait from its schedstat alone: first its timer
// slack, the most the kernel may defer its timer, then the run-queue wait
// between the two reads, each at most what is left of the lateness; the
// rest is unexplained. Both are upper bounds of their parts: the timer may
// fire sooner within its slack, and the run-queue wait is read around the
// whole wait, so time runnable before the deadline (preempted before it
// slept) is counted too.
func Layer0(w Layer0Wait) Attribution {
	a := Attribution{
		Wait:       Wait{TID: w.TID, CPU: -1, Armed: w.Armed, Expires: w.Deadline, SoftExpires: w.Deadline, Woke: w.Woke},
		LatenessNS: w.Woke - w.Deadline, TimerCPU: -1, RunCPU: -1, IdleState: IdleExit,
	}
	if a.LatenessNS <= 0 {
		return a
	}
	if w.Armed >= w.Deadline {
		a.ArmedLate = true
		a.InheritedNS = min(w.Armed-w.Deadline, a.LatenessNS)
		a.Causes = []Cause{{Kind: KindArmedLate, NS: a.LatenessNS}}
		return a
	}
	d, ok := w.After.Sub(w.Before)
	if !ok {
		a.Causes = []Cause{{Kind: KindUnexplained, NS: a.LatenessNS}}
		a.Reasons = []string{"schedstat went backwards between the reads: not the same thread"}
		return a
	}
	rq := min(int64(min(d.WaitNS, 1<<62)), a.LatenessNS)
	slack := min(max(w.SlackNS, 0), a.LatenessNS)
	rq = min(rq, a.LatenessNS-slack)
	x := &explainer{a: &a}
	x.add(KindSlack, "", slack)
	x.add(KindRunQueue, "", rq)
	x.finish()
	return a
}

// WindowNotes says what a window's counters can and cannot show, in
// plain words: steal that reads 0, no cpuidle driver, CPUs that went
// offline or came online, rows read partly.
func WindowNotes(w procstat.Window) []string {
	var notes []string
	switch {
	case len(w.Steal) == 0:
		notes = append(notes, "no CPU's steal could be read")
	case w.NoSteal():
		notes = append(notes, "steal was 0 on every CPU: a hypervisor that does not report steal reads the same, so this is not proof that the host did not delay the guest")
	}
	if len(w.Idle) == 0 {
		d := w.IdleDriver
		if d == "" {
			d = "absent"
		}
		notes = append(notes, "no cpuidle states (driver "+d+"): which idle state a CPU was in is not known")
	}
	cpus := func(cs []int) string {
		s := make([]string, len(cs))
		for i, c := range cs {
			s[i] = "cpu" + strconv.Itoa(c)
		}
		return strings.Join(s, ", ")
	}
	if gone := append(append([]int{}, w.Interrupts.Gone...), w.StealGone...); len(gone) > 0 {
		notes = append(notes, "went offline in the window: "+cpus(dedup(gone)))
	}
	if came := append(append([]int{}, w.Interrupts.Came...), w.StealCame...); len(came) > 0 {
		notes = append(notes, "came online in the window, not counted: "+cpus(dedup(came)))
	}
	for _, r := range w.Interrupts.Rows {
		if r.Partial {
			notes = append(notes, "interrupt row "+r.Name+" was read for only some CPUs")
		}
	}
	return notes
}

func dedup(cs []int) []int {
	var out []int
	for _, c := range cs {
		found := false
		for _, o := range out {
			found = found || o == c
		}
		if !found {
			out = append(out, c)
		}
	}
	return out
}
