package precise

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sys/windows"

	"github.com/tickscope/tickscope/internal/nativewait"
	"github.com/tickscope/tickscope/internal/platform/winapi"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// Hold requests a timer period for this process with NtSetTimerResolution
// and opts the process out of Windows 11's timer-resolution throttling, so
// that the request holds while its windows are hidden. release withdraws
// it; calling it again does nothing. Since Windows 10 2004 the request
// affects this process only.
//
// The kernel keeps one request per process: a second NtSetTimerResolution
// replaces the first, and one withdrawal withdraws it. So Hold counts its
// holds and makes the one request for all of them: the finest period held
// is the one requested; when the hold of the finest is released the next
// finest is requested in its place, and the request is withdrawn when the
// last hold is released. A release that fails (the request was withdrawn
// by something else in the process: another library calling
// NtSetTimerResolution or timeEndPeriod) is reported by HoldReleaseError.
//
// A period of zero or less, or under 100 ns (the call's unit), is refused.
// On builds without high-resolution waitable timers (before Windows 10
// 1803) the Go runtime calls timeEndPeriod(1) whenever the process idles,
// which would withdraw an NtSetTimerResolution request: there whole
// milliseconds are held with timeBeginPeriod, which survives it, and a
// finer period is refused with the reason.
func Hold(period time.Duration) (release func(), err error) {
	if period < 100*time.Nanosecond {
		return nil, fmt.Errorf("precise.Hold(%v): the period must be at least 100ns", period)
	}
	units := uint64(period / 100)
	if units > 0xFFFFFFFF {
		return nil, fmt.Errorf("precise.Hold(%v): the period is too long for NtSetTimerResolution", period)
	}
	if _, err := timerinfo.WholeMillisecondHold(nativewait.HighResolutionTimers(), uint32(units)); err != nil {
		return nil, fmt.Errorf("precise.Hold(%v): %w", period, err)
	}
	release, err = processHolds.hold(uint32(units))
	if err != nil {
		return nil, err
	}
	// Where the class is unknown (before Windows 11), there is no throttling
	// to opt out of: the error is not the caller's concern.
	optOutOnce.Do(func() { _ = winapi.IgnoreTimerResolutionThrottling() })
	return release, nil
}

// HoldReleaseError is the error of the last release of a Hold that failed
// to withdraw or lower the process's request, or nil when none has failed.
func HoldReleaseError() error {
	processHolds.mu.Lock()
	defer processHolds.mu.Unlock()
	return processHolds.releaseErr
}

var optOutOnce sync.Once

// processHolds is this process's one timer request, shared by every Hold.
var processHolds = &holdSet{request: requestPeriod}

// holdSet counts the holds that share the process's one request.
type holdSet struct {
	mu sync.Mutex
	// request replaces the request in force (from, 0 for none) with to (0
	// withdraws it).
	request    func(from, to uint32) error
	held       map[int]uint32 // the outstanding holds' periods, by id
	nextID     int
	active     uint32 // the period requested now, 0 for none
	releaseErr error
}

func (s *holdSet) hold(units uint32) (func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active == 0 || units < s.active {
		if err := s.request(s.active, units); err != nil {
			return nil, err
		}
		s.active = units
	}
	if s.held == nil {
		s.held = map[int]uint32{}
	}
	id := s.nextID
	s.nextID++
	s.held[id] = units
	var once sync.Once
	return func() { once.Do(func() { s.release(id) }) }, nil
}

func (s *holdSet) release(id int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.held, id)
	finest := uint32(0)
	for _, units := range s.held {
		if finest == 0 || units < finest {
			finest = units
		}
	}
	if finest == s.active {
		return
	}
	if err := s.request(s.active, finest); err != nil {
		// The request in force is unknown now: the next hold asks anew.
		s.releaseErr = err
		s.active = 0
		return
	}
	s.active = finest
}

// requestPeriod makes the process's request: NtSetTimerResolution, whose
// status is checked both ways (a withdrawal answered with
// STATUS_TIMER_RESOLUTION_NOT_SET means the request was already gone), or
// on builds without high-resolution timers timeBeginPeriod and
// timeEndPeriod of whole milliseconds, whose MMRESULT is checked.
func requestPeriod(from, to uint32) error {
	if !nativewait.HighResolutionTimers() {
		if to != 0 {
			if err := winapi.TimeBeginPeriod(to / 10000); err != nil {
				return fmt.Errorf("timeBeginPeriod(%d): %w", to/10000, err)
			}
		}
		if from != 0 {
			if err := winapi.TimeEndPeriod(from / 10000); err != nil {
				return fmt.Errorf("timeEndPeriod(%d): %w", from/10000, err)
			}
		}
		return nil
	}
	var current uint32
	if to != 0 {
		if status := winapi.NtSetTimerResolution(to, true, &current); status != windows.STATUS_SUCCESS {
			return fmt.Errorf("NtSetTimerResolution(%d, TRUE): %w", to, status)
		}
		return nil
	}
	if status := winapi.NtSetTimerResolution(from, false, &current); status != windows.STATUS_SUCCESS {
		if errors.Is(status, winapi.STATUS_TIMER_RESOLUTION_NOT_SET) {
			return fmt.Errorf("NtSetTimerResolution(%d, FALSE): the request had already been withdrawn by something else in this process: %w", from, status)
		}
		return fmt.Errorf("NtSetTimerResolution(%d, FALSE): %w", from, status)
	}
	return nil
}
