package platform

import (
	"syscall"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/winapi"
)

// TestWatchResumeManyTimes: a ui holds and releases again and again, each
// hold watching resumes; windows.NewCallback panics past about 2000
// callbacks a process, so WatchResume must not make one per call, also
// where the registration fails (Wine may lack it).
func TestWatchResumeManyTimes(t *testing.T) {
	failed := 0
	for i := 0; i < 2500; i++ {
		stop, err := system{}.WatchResume(func() {})
		if err != nil {
			failed++
			continue
		}
		stop()
	}
	t.Logf("%d of 2500 registrations failed", failed)
	resumers.Lock()
	defer resumers.Unlock()
	if len(resumers.each) != 0 {
		t.Errorf("%d registrations left after every stop", len(resumers.each))
	}
}

// TestResumeCallbackReadsULONG: the callback's event is a ULONG, which
// arrives in a 64-bit register whose upper half the caller need not clear;
// a resume with garbage there is still a resume, and a suspend is not.
func TestResumeCallbackReadsULONG(t *testing.T) {
	resumed := make(chan struct{}, 4)
	resumers.Lock()
	resumers.next++
	key := resumers.next
	if resumers.each == nil {
		resumers.each = map[uintptr]func(){}
	}
	resumers.each[key] = func() { resumed <- struct{}{} }
	resumers.Unlock()
	defer func() {
		resumers.Lock()
		delete(resumers.each, key)
		resumers.Unlock()
	}()
	const garbage = uint64(0xDEADBEEF) << 32
	for _, tt := range []struct {
		event  uint64
		resume bool
	}{
		{garbage | winapi.PBT_APMRESUMEAUTOMATIC, true},
		{garbage | winapi.PBT_APMRESUMESUSPEND, true},
		{garbage | winapi.PBT_APMSUSPEND, false},
	} {
		syscall.SyscallN(resumeCallback, key, uintptr(tt.event), 0)
		select {
		case <-resumed:
			if !tt.resume {
				t.Errorf("event %#x counted as a resume", tt.event)
			}
		case <-time.After(time.Second):
			if tt.resume {
				t.Errorf("event %#x (PBT %#x) not counted as a resume", tt.event, uint32(tt.event))
			}
		}
	}
}
