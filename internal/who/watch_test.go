package who

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func TestTrackerSummary(t *testing.T) {
	game := Hold{PID: 10, Name: "game.exe", What: WhatPeriod, Value: 5000}
	game1ms := Hold{PID: 10, Name: "game.exe", What: WhatPeriod, Value: 10000}
	chrome := Hold{PID: 20, Name: "chrome.exe", What: WhatPeriod, Value: 10000}
	tr := NewTracker(at(0), []Hold{chrome})

	if got := tr.Set(at(2), []Hold{chrome, game}); !reflect.DeepEqual(got, []Change{{At: at(2), Started: true, Hold: game}}) {
		t.Errorf("at 2 s: %+v", got)
	}
	// The game changes its request: the old one ends, the new one starts.
	if got := tr.Set(at(5), []Hold{chrome, game1ms}); !reflect.DeepEqual(got, []Change{{At: at(5), Hold: game}, {At: at(5), Started: true, Hold: game1ms}}) {
		t.Errorf("at 5 s: %+v", got)
	}
	tr.Set(at(6), []Hold{game1ms}) // chrome releases
	// The game asks for 0.5 ms again: its time adds up.
	tr.Set(at(7), []Hold{game})
	got := tr.Summary(at(10))
	want := &Summary{WatchedNs: int64(10 * time.Second), Held: []HeldFor{
		{Hold: game, HeldNs: int64(6 * time.Second), AtEnd: true},
		{Hold: game1ms, HeldNs: int64(2 * time.Second)},
		{Hold: chrome, HeldNs: int64(6 * time.Second), AtStart: true},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Summary =\n%+v\nwant\n%+v", got, want)
	}
}

func TestApplyEvent(t *testing.T) {
	holds := ApplyEvent(nil, Event{ID: 97, PID: 10, AppName: "game.exe", Period100ns: 5000})
	holds = ApplyEvent(holds, Event{ID: 96, Period100ns: 5000})
	holds = ApplyEvent(holds, Event{ID: 63, PID: 20, AppName: "a.exe", Period100ns: 10000})
	holds = ApplyEvent(holds, Event{ID: 63, PID: 10, AppName: "game.exe", Period100ns: 0}) // release
	holds = ApplyEvent(holds, Event{ID: 95, Period100ns: 10000})
	holds = ApplyEvent(holds, Event{ID: 110, PID: 30, Period100ns: 1}) // a stack: changes nothing
	sortHolds(holds)
	want := []Hold{
		{PID: 20, Name: "a.exe", What: WhatPeriod, Value: 10000},
		{Name: "the timer", What: WhatTimer, Value: 10000},
	}
	if !reflect.DeepEqual(holds, want) {
		t.Errorf("holds = %+v, want %+v", holds, want)
	}
}

func TestPollReportsChangesAndSummary(t *testing.T) {
	seven := int32(7)
	first := &Snapshot{Linux: &Linux{}}
	snaps := []*Snapshot{
		{Linux: &Linux{CPUDMALatencyUs: &seven, DMALatencyHolders: []Process{{PID: 5, Name: "tickscope"}}}},
		{Linux: &Linux{CPUDMALatencyUs: &seven, DMALatencyHolders: []Process{{PID: 5, Name: "tickscope"}}}},
	}
	clock := 0.0
	now := func() time.Time { return at(clock) }
	ctx, cancel := context.WithCancel(context.Background())
	reads := 0
	read := func() (*Snapshot, error) {
		if reads == len(snaps) {
			cancel()
			return snaps[len(snaps)-1], nil
		}
		s := snaps[reads]
		reads++
		clock++
		return s, nil
	}
	var changes []Change
	sum, err := Poll(ctx, time.Millisecond, first, read, now, func(c Change) { changes = append(changes, c) })
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 2 || !changes[0].Started || changes[0].What != WhatDMALatency || changes[0].PID != 5 || changes[1].What != WhatDMAInForce || changes[1].Value != 7 {
		t.Errorf("changes = %+v", changes)
	}
	if len(sum.Held) != 2 || sum.Held[0].AtStart || !sum.Held[0].AtEnd {
		t.Errorf("summary = %+v", sum)
	}

	// A watch whose time ends before its first tick still reads as it
	// ends: the change within it is reported, not lost to the deadline.
	changes = nil
	ends, stop := context.WithTimeout(context.Background(), time.Millisecond)
	defer stop()
	sum, err = Poll(ends, time.Hour, first, func() (*Snapshot, error) { return snaps[0], nil }, now, func(c Change) { changes = append(changes, c) })
	if err != nil || len(changes) != 2 || !changes[0].Started || len(sum.Held) != 2 {
		t.Errorf("a watch ended by its deadline before a tick: changes %+v, summary %+v, error %v", changes, sum, err)
	}

	failing := errors.New("read /proc: gone")
	if _, err := Poll(context.Background(), time.Millisecond, first, func() (*Snapshot, error) { return nil, failing }, now, func(Change) {}); !errors.Is(err, failing) {
		t.Errorf("Poll with a failing read = %v", err)
	}
}

func TestFollowAppliesEventsInOrder(t *testing.T) {
	failing := errors.New("ProcessTrace: 5")
	subscribe := func(ctx context.Context, _ <-chan struct{}, each func(Event)) error {
		each(Event{ID: 97, PID: 10, AppName: "game.exe", Period100ns: 5000, At: at(1)})
		each(Event{ID: 63, PID: 20, AppName: "a.exe", Period100ns: 10000, At: at(3)})
		each(Event{ID: 63, PID: 10, AppName: "game.exe", At: at(4)})
		return failing
	}
	var changes []Change
	calls := 0
	now := func() time.Time { // the start, then the end
		calls++
		return at(float64(10 * (calls - 1)))
	}
	sum, err := Follow(context.Background(), subscribe, DefaultFollowTiming, now, func(c Change) { changes = append(changes, c) })
	if !errors.Is(err, failing) {
		t.Errorf("Follow error = %v, want the subscription's", err)
	}
	game := Hold{PID: 10, Name: "game.exe", What: WhatPeriod, Value: 5000}
	a := Hold{PID: 20, Name: "a.exe", What: WhatPeriod, Value: 10000}
	// The rundown's request is not reported as a change: the caller
	// showed it already.
	wantChanges := []Change{{At: at(3), Started: true, Hold: a}, {At: at(4), Hold: game}}
	if !reflect.DeepEqual(changes, wantChanges) {
		t.Errorf("changes = %+v, want %+v", changes, wantChanges)
	}
	want := []HeldFor{
		{Hold: game, HeldNs: int64(4 * time.Second), AtStart: true},
		{Hold: a, HeldNs: int64(7 * time.Second), AtEnd: true},
	}
	if !reflect.DeepEqual(sum.Held, want) {
		t.Errorf("held = %+v, want %+v", sum.Held, want)
	}
}

// The kernel's default cpu_dma_latency is no request: not a hold.
func TestHoldsLeaveOutTheDefault(t *testing.T) {
	none, seven := int32(2_000_000_000), int32(7)
	if got := (&Snapshot{Linux: &Linux{CPUDMALatencyUs: &none}}).Holds(); len(got) != 0 {
		t.Errorf("holds at the default = %+v", got)
	}
	got := (&Snapshot{Linux: &Linux{CPUDMALatencyUs: &seven, Slack: []Thread{{PID: 1, TID: 2, Name: "a", SlackNs: 1}}}}).Holds()
	want := []Hold{{Name: DMALatencyDevice, What: WhatDMAInForce, Value: 7}, {PID: 1, TID: 2, Name: "a", What: WhatSlack, Value: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("holds = %+v, want %+v", got, want)
	}
}

// A process that exits holding may log no release: the next rundown, asked
// for every Every and at each change of the period, no longer names it,
// and the reconciliation ends its hold; a hold an event changed while the
// rundown was read keeps the event's word.
func TestFollowReconcilesWithAFreshRundown(t *testing.T) {
	start := time.Now()
	game := Event{ID: 97, PID: 10, AppName: "game.exe", Period100ns: 5000}
	timer := func(p uint32, at time.Time) Event { return Event{ID: 96, Period100ns: p, At: at} }
	asked := 0
	subscribe := func(ctx context.Context, rundown <-chan struct{}, each func(Event)) error {
		each(game)
		each(timer(5000, time.Time{}))
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-rundown:
				if asked++; asked == 1 {
					// The game exited with no event 63; a.exe's request
					// came while the rundown was read, after it.
					each(Event{ID: 97, PID: 20, AppName: "a.exe", Period100ns: 20000})
					each(Event{ID: 63, PID: 20, AppName: "a.exe", Period100ns: 10000, At: start.Add(time.Millisecond)})
					each(timer(10000, start.Add(2*time.Millisecond)))
				}
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	var changes []Change
	timing := FollowTiming{Every: 100 * time.Millisecond, Rundown: RundownTiming{Quiet: 20 * time.Millisecond, Most: time.Second}}
	sum, err := Follow(ctx, subscribe, timing, time.Now, func(c Change) { changes = append(changes, c) })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range changes {
		got = append(got, fmt.Sprintf("%v %d %s %d", c.Started, c.PID, c.What, c.Value))
	}
	want := []string{
		"true 20 timer period 10000", // the event, as it came
		"false 10 timer period 5000", // no longer in the rundown
		"false 0 timer period in force 5000",
		"true 0 timer period in force 10000",
	}
	if !slices.Equal(got, want) {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, h := range sum.Held {
		if h.HeldNs < 0 {
			t.Errorf("%+v held for a negative time", h)
		}
	}
}

// ETW does not order events across CPUs: a release stamped before the
// request it ends counts 0, never a negative time.
func TestTrackerClampsOutOfOrderTimes(t *testing.T) {
	h := Hold{PID: 1, Name: "a.exe", What: WhatPeriod, Value: 10000}
	tr := NewTracker(at(0), nil)
	tr.Set(at(5), []Hold{h})
	tr.Set(at(4), nil) // stamped before it began
	tr.Set(at(6), []Hold{h})
	sum := tr.Summary(at(3)) // and the end before the last start
	if len(sum.Held) != 1 || sum.Held[0].HeldNs != 0 {
		t.Errorf("held = %+v, want 0", sum.Held)
	}
}
