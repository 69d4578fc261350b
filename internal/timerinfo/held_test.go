package timerinfo_test

import (
	"testing"

	"github.com/tickscope/tickscope/internal/timerinfo"
)

func TestHeldAndInForceShareTheQuantisation(t *testing.T) {
	tests := []struct {
		current, request uint32
		finer, inForce   bool
	}{
		{0, 10000, false, false},      // unknown
		{9996, 10000, false, true},    // the grant of 1 ms
		{10010, 10000, false, true},   // within 1 µs above
		{10011, 10000, false, false},  // coarser than the request
		{5000, 10000, true, true},     // another process holds 0.5 ms
		{156250, 10000, false, false}, // the default
		{4992, 5000, false, true},     // the grant of 0.5 ms
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
