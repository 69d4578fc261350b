package platform_test

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tickscope/tickscope/internal/platform"
	"github.com/tickscope/tickscope/internal/seam"
)

// The clock ThreadCPU reads is the calling thread's own CPU clock: read
// from the thread, it brackets what CLOCK_THREAD_CPUTIME_ID says between
// two readings (a wrong clock id would name another thread or the whole
// process, whose time is not bracketed, or none).
func TestLinuxThreadCPUIsTheThreadsClock(t *testing.T) {
	clock, ok := platform.New().(seam.ThreadClock)
	if !ok {
		t.Fatal("the Linux host is not a seam.ThreadClock")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		read, release, err := clock.ThreadCPU()
		if err != nil {
			t.Error(err)
			return
		}
		defer release()
		for i := range 3 {
			for start := time.Now(); time.Since(start) < 5*time.Millisecond; {
			}
			before := read()
			var ts unix.Timespec
			if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
				t.Error(err)
				return
			}
			after := read()
			if own := time.Duration(ts.Nano()); own < before || own > after {
				t.Errorf("round %d: the thread's own CPU clock says %v, outside ThreadCPU's %v .. %v", i, own, before, after)
			}
		}
	}()
	<-done
}
