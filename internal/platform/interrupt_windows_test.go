package platform_test

import (
	"runtime"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/tickscope/tickscope/internal/platform"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/winapi"
)

// The interrupt time read in a loop: what is physically guaranteed is that
// it was read and never went back; what it shows (steps of the period in
// force on Windows, a continuous count under Wine) is logged.
func TestPollInterruptTime(t *testing.T) {
	clock, ok := platform.New().(seam.InterruptClock)
	if !ok {
		t.Fatal("the Windows host is not an InterruptClock")
	}
	source, reads, values, err := clock.PollInterruptTime(100 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if reads == 0 || len(values) == 0 || len(values) > reads {
		t.Fatalf("%d reads, %d values", reads, len(values))
	}
	for i := 1; i < len(values); i++ {
		if values[i] <= values[i-1] {
			t.Fatalf("the interrupt time went back: %d then %d", values[i-1], values[i])
		}
	}
	tick := timerinfo.AnalyseInterruptTime(source, reads, values)
	steps := tick.Steps
	if len(steps) > 5 {
		steps = steps[:5]
	}
	t.Logf("%s: %d reads, %d changes, quantised %v, period %d x 100ns, most frequent steps %v", source, reads, len(values)-1, tick.Quantised, tick.Period100ns, steps)
}

// Polling raises its thread to THREAD_PRIORITY_TIME_CRITICAL; afterwards
// neither the caller's thread nor any other thread of the process may be
// left there ("GetThreadPriority function", Microsoft Learn): a thread Go
// hands back to its pool at that priority would run any goroutine above
// every normal thread on the machine. The caller's thread is locked so
// that the poll, were it to run on it, would be seen.
func TestPollInterruptTimeLeavesNoThreadTimeCritical(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before, err := winapi.GetThreadPriority(windows.CurrentThread())
	if err != nil {
		t.Fatal(err)
	}
	clock := platform.New().(seam.InterruptClock)
	for range 3 {
		if _, _, _, err := clock.PollInterruptTime(20 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	after, err := winapi.GetThreadPriority(windows.CurrentThread())
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("the calling thread's priority is %d after the poll, %d before", after, before)
	}
	priorities := threadPriorities(t)
	for id, p := range priorities {
		if p == winapi.THREAD_PRIORITY_TIME_CRITICAL {
			t.Errorf("thread %d of this process is left at THREAD_PRIORITY_TIME_CRITICAL after the poll", id)
		}
	}
	t.Logf("the calling thread's priority: %d before, %d after; the process's threads: %v", before, after, priorities)
}

// threadPriorities reads the priority of every thread of this process,
// found with a toolhelp snapshot.
func threadPriorities(t *testing.T) map[uint32]int32 {
	t.Helper()
	snapshot, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(snapshot)
	pid := windows.GetCurrentProcessId()
	priorities := map[uint32]int32{}
	entry := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	for err = windows.Thread32First(snapshot, &entry); err == nil; err = windows.Thread32Next(snapshot, &entry) {
		if entry.OwnerProcessID != pid {
			continue
		}
		thread, err := windows.OpenThread(windows.THREAD_QUERY_LIMITED_INFORMATION, false, entry.ThreadID)
		if err != nil {
			continue // it ended since the snapshot
		}
		p, err := winapi.GetThreadPriority(thread)
		windows.CloseHandle(thread)
		if err != nil {
			t.Fatalf("GetThreadPriority(thread %d): %v", entry.ThreadID, err)
		}
		priorities[entry.ThreadID] = p
	}
	if len(priorities) == 0 {
		t.Fatal("no thread of this process was found")
	}
	return priorities
}
