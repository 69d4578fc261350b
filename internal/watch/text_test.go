package watch_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/timerstate"
	"github.com/tickscope/tickscope/internal/watch"
	"github.com/tickscope/tickscope/internal/who"
)

// TestWatchText: watch's lines for Windows, as a user reads them: the
// start, a change with its holders, a failed read on standard error, the
// summary; and nothing for a burst.
func TestWatchText(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)
	no := false
	state := timerstate.State{Current100ns: 156250, Finest100ns: 5000, Coarsest100ns: 156250, GlobalKeyInForce: &no}
	none := []who.Hold{}
	game := []who.Hold{{PID: 4321, Name: "game.exe", What: who.WhatPeriod, Value: 5000}}
	sum := &watch.Summary{DurationNs: int64(10 * time.Second), Reads: 10, Changes: 1, Bursts: 1,
		TimeAt: []watch.PeriodTime{{Period: "15.6250 ms", Ns: int64(4 * time.Second)}, {Period: "0.5000 ms", Ns: int64(6 * time.Second)}},
		Lateness: &watch.Lateness{Method: "sleep", DelayNs: 1e6, Waits: 3, MinNs: 400e3, MaxNs: 200e6, MeanNs: 70e6, P50AtMostNs: 500e3, P99AtMostNs: 0,
			Buckets: []watch.Bucket{{LeNs: 500e3, Count: 2}, {LeNs: 0, Count: 1}}}}
	var out, errs bytes.Buffer
	for _, e := range []watch.Event{
		{Time: at, Event: watch.EventStart, State: &state, Holders: &none, Start: &watch.Start{EveryNs: 1e9, MeasureEveryNs: 10e9, Method: "sleep", DelayNs: 1e6, Waits: 200}},
		{Time: at, Event: watch.EventBurst, Burst: &watch.Burst{Method: "sleep"}},
		{Time: at, Event: watch.EventChange, Changes: []watch.Change{{Field: "current_period", From: "15.6250 ms", To: "0.5000 ms"}}, Holders: &game},
		{Time: at, Event: watch.EventChange, Changes: []watch.Change{{Field: "global_key_in_force", From: "false", To: "true"}}, HoldersError: "needs elevation"},
		{Time: at, Event: watch.EventError, Error: "reading the timer state: failed"},
		{Time: at, Event: watch.EventSummary, Summary: sum},
	} {
		if err := watch.WriteEvent(&out, &errs, e, false); err != nil {
			t.Fatal(err)
		}
	}
	want := `2026-01-02 03:04:05.000  watching: current period 15.6250 ms (finest 0.5000, coarsest 15.6250), GlobalTimerResolutionRequests in force: no
2026-01-02 03:04:05.000  the state read every 1s, 200 sleep waits of 1 ms timed every 10s; ESC or Ctrl+C ends it
2026-01-02 03:04:05.000  holders: none
2026-01-02 03:04:05.000  current period 15.6250 ms -> 0.5000 ms
2026-01-02 03:04:05.000  holders: process 4321 game.exe holds 0.5000 ms
2026-01-02 03:04:05.000  GlobalTimerResolutionRequests in force false -> true
2026-01-02 03:04:05.000  holders: not read (needs elevation)
watched for 10s: 10 reads, 1 changes, 1 bursts
time at each period
  15.6250 ms                                 4s   40.0 %
  0.5000 ms                                  6s   60.0 %
lateness of 3 sleep waits of 1 ms over the run (measured): min 400 µs, mean 70 ms, p50 ≤ 500 µs, p99 > 100 ms, max 200 ms
  ≤ 500 µs          2  ████████████████████████████████████████
  > 100 ms          1  ████████████████████
`
	if out.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", out.String(), want)
	}
	if got := errs.String(); !strings.HasPrefix(got, "tickscope: warning: 2026-01-02 03:04:05.000  reading the timer state: failed\n") {
		t.Errorf("stderr %q", got)
	}
}
