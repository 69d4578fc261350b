package platform_test

import (
	"errors"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tickscope/tickscope/internal/platform"
	"github.com/tickscope/tickscope/internal/seam"
)

// ownLocks keeps the test's locks in a directory of its own on Unix, not
// in the machine's (a holder or bench running there, or another test run):
// Windows keeps them in named mutexes of the terminal session (Local\).
func ownLocks(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "windows" {
		t.Setenv(platform.RuntimeDirEnv, t.TempDir())
	}
}

func TestLockIsExclusiveAndNamesTheHolder(t *testing.T) {
	ownLocks(t)
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

// Holder probes the holder's lock without taking it: a holder that starts
// while ui, watch, status or apply --persist probe is never refused. Here
// a probe runs in a loop while the holder's lock is taken and released
// again and again; a probe that took the lock, even for an instant, would
// make some of those fail.
func TestHolderProbeNeverTakesTheLock(t *testing.T) {
	ownLocks(t)
	sys := platform.NewSystem()
	if _, running := sys.Holder(); running {
		t.Skip("a startup holder runs on this machine")
	}
	var stop atomic.Bool
	var probes, seenRunning atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if pid, running := sys.Holder(); running && pid == os.Getpid() {
				seenRunning.Add(1)
			}
			probes.Add(1)
		}
	}()
	const takes = 50
	refused := 0
	for i := 0; i < takes; i++ {
		release, err := sys.Lock(seam.HolderLock)
		if err != nil {
			refused++
			continue
		}
		for n := probes.Load(); probes.Load() < n+2; {
			runtime.Gosched() // let the probe see it held
		}
		release()
	}
	stop.Store(true)
	wg.Wait()
	if refused > 0 {
		t.Errorf("%d of %d takes of the holder's lock were refused while %d probes ran", refused, takes, probes.Load())
	}
	if seenRunning.Load() == 0 {
		t.Errorf("%d probes never saw the holder's lock held by this process", probes.Load())
	}
	if _, running := sys.Holder(); running {
		t.Error("the holder's lock is seen held after the last release")
	}
}
