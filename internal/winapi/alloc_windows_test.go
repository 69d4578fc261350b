package winapi_test

import (
	"testing"

	"golang.org/x/sys/windows"

	"github.com/tickscope/tickscope/internal/winapi"
)

// TestMeasuringCallsDoNotAllocate: the calls a measurement makes on every
// sample (the clock read, the timer armed for each wait, the period
// queried) allocate nothing, so that a sample never waits on the garbage
// collector. The bindings call syscall.SyscallN directly, which keeps its
// pointer arguments alive without moving them to the heap, where
// LazyProc.Call's arguments escape.
func TestMeasuringCallsDoNotAllocate(t *testing.T) {
	timer, err := winapi.CreateWaitableTimerEx(nil, nil, 0, windows.TIMER_ALL_ACCESS)
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(timer)
	winapi.QPCNanos() // the frequency, read once
	for _, c := range []struct {
		name string
		call func()
	}{
		{"QPCNanos", func() { winapi.QPCNanos() }},
		{"NtQueryTimerResolution", func() { winapi.NtQueryTimerResolution() }},
		{"SetWaitableTimerEx", func() {
			due := int64(-10_000_000) // 1 s from now: it never fires here
			winapi.SetWaitableTimerEx(timer, &due, 0, 0, nil, nil, 0)
		}},
	} {
		if n := testing.AllocsPerRun(1000, c.call); n != 0 {
			t.Errorf("%s: %v allocations per call, want 0", c.name, n)
		}
	}
}
