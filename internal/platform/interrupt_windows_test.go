package platform_test

import (
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/platform"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// The interrupt time read in a loop: what is physically guaranteed is that
// it was read and never went back; what it shows (steps of the period in
// force on Windows, a continuous count under Wine) is logged.
func TestPollInterruptTime(t *testing.T) {
	clock, ok := platform.New().(seam.InterruptClock)
	if !ok {
		t.Fatal("the Windows host is not an InterruptClock")
	}
	source, reads, values, err := clock.PollInterruptTime(100 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if reads == 0 || len(values) == 0 || len(values) > reads {
		t.Fatalf("%d reads, %d values", reads, len(values))
	}
	for i := 1; i < len(values); i++ {
		if values[i] <= values[i-1] {
			t.Fatalf("the interrupt time went back: %d then %d", values[i-1], values[i])
		}
	}
	tick := timerinfo.AnalyseInterruptTime(source, reads, values)
	steps := tick.Steps
	if len(steps) > 5 {
		steps = steps[:5]
	}
	t.Logf("%s: %d reads, %d changes, quantised %v, period %d x 100ns, most frequent steps %v", source, reads, len(values)-1, tick.Quantised, tick.Period100ns, steps)
}
