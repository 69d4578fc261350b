package machine_test

import (
	"slices"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/machine"
	"github.com/tickscope/tickscope/internal/platform"
)

// The portable methods keep their order on every OS: Go's own, precise's,
// the pure spin last. The OS's own come first and are platform's.
func TestPreciseMethodsSitBetweenGoAndSpin(t *testing.T) {
	if platform.Supported() != nil {
		t.Skip("this OS is not served: its host lists no methods")
	}
	var listed []string
	for _, m := range machine.Host().Methods() {
		listed = append(listed, m.Name)
	}
	want := []string{"go", "go-until", "go-ticker", "precise", "precise-ticker", "spin"}
	if len(listed) < len(want) || !slices.Equal(listed[len(listed)-len(want):], want) {
		t.Errorf("methods %v, want them to end with %v", listed, want)
	}
	for _, m := range platform.New().Methods() {
		if m.Name == "precise" || m.Name == "precise-ticker" {
			t.Errorf("platform's own host lists %s: it is registered by package machine", m.Name)
		}
	}
}

// Each precise method makes a waiter that waits and closes without error.
func TestPreciseWaiters(t *testing.T) {
	if platform.Supported() != nil {
		t.Skip("this OS is not served")
	}
	h := machine.Host()
	for _, name := range []string{"precise", "precise-ticker"} {
		w, err := h.NewWaiter(name, 100*time.Microsecond)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for range 3 {
			if err := w.Wait(h.Now() + int64(100*time.Microsecond)); err != nil {
				t.Errorf("%s: Wait: %v", name, err)
			}
		}
		if err := w.Close(); err != nil {
			t.Errorf("%s: Close: %v", name, err)
		}
	}
}
