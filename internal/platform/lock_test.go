package platform_test

import (
	"errors"
	"os"
	"testing"

	"github.com/tickscope/tickscope/internal/platform"
	"github.com/tickscope/tickscope/internal/seam"
)

func TestLockIsExclusiveAndNamesTheHolder(t *testing.T) {
	name := "test-" + t.Name()
	sys := platform.NewSystem()
	release, err := sys.Lock(name)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sys.Lock(name)
	var locked *seam.LockedError
	if !errors.As(err, &locked) {
		t.Fatalf("second Lock: %v, want a LockedError", err)
	}
	if locked.PID != os.Getpid() {
		t.Errorf("the lock names process %d, want %d", locked.PID, os.Getpid())
	}
	release()
	again, err := sys.Lock(name)
	if err != nil {
		t.Fatalf("Lock after release: %v", err)
	}
	again()
}
