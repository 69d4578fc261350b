package platform_test

import (
	"context"
	"errors"
	"os"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/tickscope/tickscope/internal/platform"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/who"
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

// Any user can create Global\tickscope-who first and hold it ("CreateMutexW
// function", Microsoft Learn): a squatter holding it while no session of
// who.SessionName runs does not make who busy. The squatter here is a
// thread of this process that owns the mutex, which Lock's thread then
// finds owned, as it would another process's. Elevated, the holders are
// read; under Wine (elevated, no session can be opened for reading) the
// read fails at OpenTraceW, as with no squatter, and not with ErrBusy.
func TestASquatterOnTheWhoLockIsNotBusy(t *testing.T) {
	sys := platform.NewSystem()
	if !sys.Elevated() {
		t.Skip("reading the holders needs an elevated token (an ETW session)")
	}
	defer func(w time.Duration) { who.LockWait = w }(who.LockWait)
	who.LockWait = 200 * time.Millisecond
	name, _ := windows.UTF16PtrFromString(`Global\tickscope-who`)
	held, release := make(chan error, 1), make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		h, err := windows.CreateMutex(nil, true, name)
		if errors.Is(err, windows.ERROR_ALREADY_EXISTS) {
			windows.CloseHandle(h)
			held <- errors.New("another tickscope reads who holds the timer")
			return
		}
		held <- err
		if err != nil {
			return
		}
		<-release
		windows.ReleaseMutex(h)
		windows.CloseHandle(h)
	}()
	if err := <-held; err != nil {
		t.Skip(err)
	}
	defer close(release)
	_, err := sys.Holders(context.Background())
	if errors.Is(err, who.ErrBusy) {
		t.Fatalf("Holders with the lock squatted: %v", err)
	}
	if err != nil && !underWine() {
		t.Fatalf("Holders with the lock squatted: %v", err)
	}
	t.Logf("Holders with the lock squatted: %v", err)
}
