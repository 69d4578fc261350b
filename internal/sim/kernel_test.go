package sim

import (
	"reflect"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/etwkernel"
)

func kernelRun(t *testing.T, name string, seed uint64, n int) (*Host, *Kernel) {
	t.Helper()
	h, k, err := NewKernelHost(name, seed)
	if err != nil {
		t.Fatal(err)
	}
	w, err := h.NewWaiter("sleep", time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		w.Wait(0)
	}
	return h, k
}

// The kernel's events are deterministic from the seed, in time order
// after the rundown, and its truth has each driver's DPCs.
func TestKernelDeterministic(t *testing.T) {
	_, a := kernelRun(t, "dpc-storm", 3, 500)
	_, b := kernelRun(t, "dpc-storm", 3, 500)
	if !reflect.DeepEqual(a.Events(), b.Events()) || !reflect.DeepEqual(a.Truth(), b.Truth()) {
		t.Fatal("the same seed gave other events")
	}
	_, c := kernelRun(t, "dpc-storm", 4, 500)
	if reflect.DeepEqual(a.Truth(), c.Truth()) {
		t.Fatal("another seed gave the same waits")
	}
	dpc := map[string]int64{}
	for _, tr := range a.Truth() {
		for img, ns := range tr.DPCNs {
			dpc[img] += ns
		}
	}
	for _, img := range []string{"storport.sys", "ndis.sys"} {
		if dpc[img] == 0 {
			t.Errorf("no %s DPC in 500 waits", img)
		}
	}
	var last int64
	for _, ev := range a.Events() {
		if _, ok := ev.(*etwkernel.ImageLoad); ok {
			continue
		}
		if at := ev.Meta().At; at < last {
			t.Fatalf("event at %d after one at %d", at, last)
		} else {
			last = at
		}
	}
}

// A scenario of the model without interference logs no ISR or DPC, and
// explain's own scenarios stay out of the other commands' list.
func TestKernelPlainScenario(t *testing.T) {
	_, k := kernelRun(t, "published-pairs", 1, 200)
	for _, ev := range k.Events() {
		switch ev.(type) {
		case *etwkernel.ISR, *etwkernel.DPC:
			t.Fatalf("%T on a scenario without drivers", ev)
		}
	}
	if len(k.Truth()) != 200 || len(k.ClockInterrupts()) == 0 || k.PeriodNs() != 15_625_000 {
		t.Fatalf("%d truths, %d clock interrupts, period %d", len(k.Truth()), len(k.ClockInterrupts()), k.PeriodNs())
	}
	if _, ok := FindKernel("dpc-storm"); !ok {
		t.Fatal("dpc-storm not found")
	}
	if _, ok := Find("dpc-storm"); ok {
		t.Fatal("dpc-storm is among the other commands' scenarios")
	}
}
