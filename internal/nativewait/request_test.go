package nativewait

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// The set makes the process's one request for every hold: nested holds
// share it, the finest wins, and only the last release withdraws it. The
// request is recorded instead of made, so this tests the counting on any
// OS.
func TestRequestSetSharesTheOneRequest(t *testing.T) {
	var calls []string
	queries := 0
	s := &requestSet{
		request: func(from, to uint32) (uint32, error) {
			calls = append(calls, fmt.Sprintf("%d->%d", from, to))
			return to, nil
		},
		query: func() uint32 { queries++; return 4242 },
	}
	current, coarse, err := s.hold(10000)
	if err != nil || current != 10000 {
		t.Fatalf("first hold: current %d, %v", current, err)
	}
	_, fine, _ := s.hold(5000)
	// Coarser than the one in force: no request, the period in force read.
	current, coarser, _ := s.hold(20000)
	if current != 4242 || queries != 1 {
		t.Errorf("a coarser hold: current %d after %d queries, want the query's 4242 after 1", current, queries)
	}
	for _, release := range []func() error{fine, fine, coarse, coarser} { // twice is once
		if err := release(); err != nil {
			t.Errorf("release: %v", err)
		}
	}
	want := "0->10000 10000->5000 5000->10000 10000->20000 20000->0"
	if got := strings.Join(calls, " "); got != want {
		t.Errorf("requests made: %s\nwant %s", got, want)
	}
	if s.active != 0 || len(s.held) != 0 {
		t.Errorf("after the last release: active %d, %d holds", s.active, len(s.held))
	}
}

// A release whose request fails returns its error (once: a second call
// is nil), and the next hold asks anew; a refused first request holds
// nothing.
func TestRequestSetReportsAFailedRelease(t *testing.T) {
	notSet := errors.New("STATUS_TIMER_RESOLUTION_NOT_SET")
	var calls []string
	s := &requestSet{request: func(from, to uint32) (uint32, error) {
		calls = append(calls, fmt.Sprintf("%d->%d", from, to))
		if to == 0 {
			return 0, notSet
		}
		return to, nil
	}}
	_, release, err := s.hold(5000)
	if err != nil {
		t.Fatal(err)
	}
	if err := release(); !errors.Is(err, notSet) {
		t.Errorf("release = %v, want the withdrawal's error", err)
	}
	if err := release(); err != nil {
		t.Errorf("a second release = %v, want nil", err)
	}
	if _, _, err := s.hold(5000); err != nil || strings.Join(calls, " ") != "0->5000 5000->0 0->5000" {
		t.Errorf("after a failed withdrawal the next hold: %v, requests %v", err, calls)
	}
	s = &requestSet{request: func(from, to uint32) (uint32, error) { return 0, notSet }}
	if _, _, err := s.hold(5000); err == nil || len(s.held) != 0 || s.active != 0 {
		t.Errorf("a refused request: err %v, %d holds, active %d", err, len(s.held), s.active)
	}
}
