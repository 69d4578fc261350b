package platform

import (
	"syscall"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/nativewait"
	"github.com/tickscope/tickscope/internal/seam"
)

// A SIGCONT the process receives is told, at a time after it was sent;
// the suspended time does not move while nothing suspends the machine.
func TestWatchStopsHearsSIGCONT(t *testing.T) {
	var h seam.StopWatcher = New().(*linuxHost)
	w, err := h.WatchStops()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	suspended := w.Suspended()
	sent := nativewait.Now()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(w.Continued()) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	seen := w.Continued()
	if len(seen) != 1 || seen[0] < sent {
		t.Fatalf("continued %v, want one time after %d", seen, sent)
	}
	if d := w.Suspended() - suspended; d > 1_000_000 || d < -1_000_000 {
		t.Errorf("the suspended time moved by %d ns with nothing suspended", d)
	}
}

// AwaitContinue returns as a continue seen after since is told, and at
// once when one was already told.
func TestAwaitContinueReturnsOnSIGCONT(t *testing.T) {
	w := newContinueWatch(suspendedLinux)
	defer w.Close()
	since := nativewait.Now()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	begun := time.Now()
	w.AwaitContinue(since, time.Minute)
	if len(w.Continued()) != 1 {
		t.Fatalf("AwaitContinue returned after %v with continues %v, want the one sent", time.Since(begun), w.Continued())
	}
	w.AwaitContinue(since, time.Minute) // told already
	if d := time.Since(begun); d > 30*time.Second {
		t.Errorf("AwaitContinue took %v", d)
	}
}
