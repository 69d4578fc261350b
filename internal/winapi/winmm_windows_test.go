package winapi_test

import (
	"errors"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/tickscope/tickscope/internal/winapi"
)

// These run only on Windows (the file's suffix): on the real winmm in the
// workflow's Windows job, and on Wine's in TestWine/winapi (no machine of
// this project runs Windows; CONTRIBUTING.md).

// TestTimeBeginPeriodReportsItsMMRESULT: timeBeginPeriod(0) is out of range
// and returns TIMERR_NOCANDO ("timeBeginPeriod function", Microsoft Learn),
// which the binding must report (x/sys's wrapper reported GetLastError).
func TestTimeBeginPeriodReportsItsMMRESULT(t *testing.T) {
	err := winapi.TimeBeginPeriod(0)
	var r winapi.MMResult
	if !errors.As(err, &r) || r != winapi.TIMERR_NOCANDO {
		winapi.TimeEndPeriod(0)
		t.Fatalf("timeBeginPeriod(0) = %v, want TIMERR_NOCANDO", err)
	}
}

// TestTimeKillEventIsSynchronous: with TIME_KILL_SYNCHRONOUS, no callback
// runs after timeKillEvent returns ("timeSetEvent function", Microsoft
// Learn), so an event closed right after is never set through a reused
// handle. A new event, which often reuses the closed one's handle value,
// stays unset.
func TestTimeKillEventIsSynchronous(t *testing.T) {
	for range 20 {
		event, err := windows.CreateEvent(nil, 0, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		id, err := winapi.TimeSetEvent(1, 0, event, winapi.TIME_PERIODIC|winapi.TIME_CALLBACK_EVENT_SET|winapi.TIME_KILL_SYNCHRONOUS)
		if err != nil {
			windows.CloseHandle(event)
			t.Fatal(err)
		}
		windows.WaitForSingleObject(event, 100)
		winapi.TimeKillEvent(id)
		windows.CloseHandle(event)
		next, err := windows.CreateEvent(nil, 0, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
		state, _ := windows.WaitForSingleObject(next, 0)
		windows.CloseHandle(next)
		if state == windows.WAIT_OBJECT_0 {
			t.Fatalf("an event created after timeKillEvent was set: a callback ran after the kill")
		}
	}
}
