package platform_test

import (
	"context"
	"os"
	"testing"

	"github.com/tickscope/tickscope/internal/platform"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// The Kernel-Power rundown names this process while it holds a request:
// what only real Windows, elevated, can show (a GitHub Actions runner is
// elevated). Under Wine the session cannot be opened for reading (the Wine
// scripts check that who fails cleanly there).
func TestHoldersNameThisProcessWhileItHoldsARequest(t *testing.T) {
	sys := platform.NewSystem()
	if !sys.Elevated() {
		t.Skip("naming holders needs an elevated token (an ETW session)")
	}
	optOut(t)
	h := platform.New()
	w := periods(t, h)
	granted, release, err := h.Apply(timerinfo.Setting{Resolution100ns: w.Finest100ns})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	snap, err := sys.Holders(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if snap.Windows == nil {
		t.Fatal("no Windows section")
	}
	found := false
	for _, holder := range snap.Windows.Holders {
		if int(holder.PID) == os.Getpid() {
			found = true
			if !holder.Self || holder.Period100ns == 0 || holder.Period100ns > w.Coarsest100ns {
				t.Errorf("this process's request as the rundown names it: %+v (granted %d)", holder, granted.Resolution100ns)
			}
		}
		if holder.Period100ns == 0 {
			t.Errorf("a holder without a period: %+v", holder)
		}
	}
	if !found {
		t.Errorf("the rundown does not name this process (%d), which holds %d x 100ns: %+v", os.Getpid(), granted.Resolution100ns, snap.Windows.Holders)
	}
	// A second read starts again: the first session was stopped.
	if _, err := sys.Holders(context.Background()); err != nil {
		t.Errorf("a second read: %v", err)
	}
}
