package precise_test

import (
	"testing"
	"time"

	"github.com/tickscope/tickscope/precise"
)

// Zero, negative and sub-100 ns periods are refused on every OS (issue 16,
// defect 6), and nested holds release cleanly.
func TestHoldValidatesAndNests(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Millisecond, 50 * time.Nanosecond} {
		if release, err := precise.Hold(d); err == nil {
			release()
			t.Errorf("Hold(%v) was accepted", d)
		}
	}
	outer, err := precise.Hold(time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := precise.Hold(time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	inner()
	outer()
	outer()
	if err := precise.HoldReleaseError(); err != nil {
		t.Errorf("HoldReleaseError() = %v after clean releases", err)
	}
}
