package precise_test

import (
	"testing"
	"time"

	"github.com/tickscope/tickscope/precise"
)

// Periods under 100 ns are refused on every OS, and nested holds release
// cleanly: each release once, a second call nil.
func TestHoldValidatesAndNests(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Millisecond, 50 * time.Nanosecond, 99 * time.Nanosecond} {
		if release, err := precise.Hold(d); err == nil {
			release()
			t.Errorf("Hold(%v) was accepted", d)
		}
	}
	outer, err := precise.Hold(time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := precise.Hold(500 * time.Microsecond)
	if err != nil {
		t.Fatal(err)
	}
	for name, release := range map[string]func() error{"inner": inner, "outer": outer, "outer again": outer} {
		if err := release(); err != nil {
			t.Errorf("%s release: %v", name, err)
		}
	}
}
