package cpushare

import "testing"

// TestSub: the run time's difference, which a thread that ended between
// two reads makes smaller than it was, is never negative.
func TestSub(t *testing.T) {
	if got := (Time{Ticks: 7, Ns: 900}).Sub(Time{Ticks: 5, Ns: 400}); got != (Time{Ticks: 2, Ns: 500}) {
		t.Errorf("Sub: %+v, want {2 500}", got)
	}
	if got := (Time{Ticks: 7, Ns: 300}).Sub(Time{Ticks: 5, Ns: 400}); got != (Time{Ticks: 2, Ns: 0}) {
		t.Errorf("Sub after a thread ended: %+v, want {2 0}", got)
	}
}
