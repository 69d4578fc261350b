package precise

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The kernel keeps one request per process: nested holds share it, the
// finest wins, and only the last release withdraws it (issue 16, defect 6).
// The request is recorded instead of made, so this tests the counting.
func TestHoldSetSharesTheOneRequest(t *testing.T) {
	var calls []string
	s := &holdSet{request: func(from, to uint32) error {
		calls = append(calls, fmt.Sprintf("%d->%d", from, to))
		return nil
	}}
	coarse, err := s.hold(10000)
	if err != nil {
		t.Fatal(err)
	}
	fine, _ := s.hold(5000)
	coarser, _ := s.hold(20000) // coarser than the one in force: no call
	fine()
	fine() // twice is once
	coarse()
	coarser()
	want := "0->10000 10000->5000 5000->10000 10000->20000 20000->0"
	if got := strings.Join(calls, " "); got != want {
		t.Errorf("requests made: %s\nwant %s", got, want)
	}
	if s.active != 0 || len(s.held) != 0 {
		t.Errorf("after the last release: active %d, %d holds", s.active, len(s.held))
	}
}

func TestHoldSetReportsAFailedRelease(t *testing.T) {
	failWithdraw := errors.New("STATUS_TIMER_RESOLUTION_NOT_SET")
	s := &holdSet{request: func(from, to uint32) error {
		if to == 0 {
			return failWithdraw
		}
		return nil
	}}
	release, err := s.hold(5000)
	if err != nil {
		t.Fatal(err)
	}
	release()
	if !errors.Is(s.releaseErr, failWithdraw) {
		t.Errorf("releaseErr = %v, want the withdrawal's error", s.releaseErr)
	}
	// A failed first request holds nothing.
	s = &holdSet{request: func(from, to uint32) error { return failWithdraw }}
	if _, err := s.hold(5000); err == nil || len(s.held) != 0 || s.active != 0 {
		t.Errorf("a refused request: err %v, %d holds, active %d", err, len(s.held), s.active)
	}
}

func TestHoldRefusesZeroAndNegative(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Millisecond, 99 * time.Nanosecond} {
		if release, err := Hold(d); err == nil {
			release()
			t.Errorf("Hold(%v) was accepted", d)
		}
	}
}
