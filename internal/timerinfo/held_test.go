package timerinfo_test

import (
	"testing"

	"github.com/tickscope/tickscope/internal/timerinfo"
)

func TestHeldAndInForce(t *testing.T) {
	tests := []struct {
		current, request uint32
		finer, inForce   bool
	}{
		{0, 10000, false, false}, // unknown
		// Held 0.9996 ms, the grant of 1 ms: a 1 ms request is granted
		// what is held, and its own grant is not seen.
		{9996, 10000, true, true},
		{10010, 10000, false, true},   // within 1 µs above
		{10011, 10000, false, false},  // coarser than the request
		{5000, 10000, true, true},     // another process holds 0.5 ms
		{156250, 10000, false, false}, // the default
		// Held 0.4992 ms (another's 0.5 ms): a 0.5 ms request is granted
		// what is held, and its own grant is not seen.
		{4992, 5000, true, true},
		// Held 0.5000 ms: 0.5005 ms measures 0.5000 (no allowance).
		{5000, 5005, true, true},
		{5000, 5000, false, true},
	}
	for _, tt := range tests {
		if got := timerinfo.HeldFinerThan(tt.current, tt.request); got != tt.finer {
			t.Errorf("HeldFinerThan(%d, %d) = %v, want %v", tt.current, tt.request, got, tt.finer)
		}
		if got := timerinfo.PeriodInForce(tt.current, tt.request); got != tt.inForce {
			t.Errorf("PeriodInForce(%d, %d) = %v, want %v", tt.current, tt.request, got, tt.inForce)
		}
	}
}
