package inspect_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/sim/simtest"

	"github.com/tickscope/tickscope/internal/inspect"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/who"
)

// showRecorder records what who shows as it goes.
type showRecorder struct {
	reads   int
	changes []who.Change
}

func (s *showRecorder) Read(*inspect.WhoReport) { s.reads++ }
func (s *showRecorder) Changed(c who.Change)    { s.changes = append(s.changes, c) }

// Not elevated on Windows: no ETW session is tried; the periods and
// Sleep(1) measured now (on the model) are what can be known.
func TestWhoWindowsNotElevated(t *testing.T) {
	sys := &sim.System{HoldersErr: errors.New("must not be called")}
	var show showRecorder
	rep, err := inspect.Who(context.Background(), simtest.NewWindows(t, "narrow-band"), sys, 0, &show)
	if err != nil {
		t.Fatal(err)
	}
	w := rep.Windows
	if w == nil || w.NeedsElevation != who.NeedsElevation || w.Holders != nil || w.Sleep1 == nil || w.Sleep1.Samples == 0 || w.Coarsest100ns == 0 {
		t.Fatalf("report = %+v", w)
	}
	if show.reads != 1 {
		t.Errorf("shown %d times, want once", show.reads)
	}
}

// Elevated on Windows: the holders are the rundown's; --watch follows the
// events after it and reports each change and the summary.
func TestWhoWindowsElevatedWatch(t *testing.T) {
	snap := &who.Snapshot{Windows: &who.Windows{Holders: []who.Holder{{PID: 10, Image: "game.exe", Period100ns: 5000}}, Timer: &who.TimerRundown{Current100ns: 5000}}}
	sys := &sim.System{IsElevated: true, Snapshots: []*who.Snapshot{snap}, Events: []who.Event{
		{ID: 97, PID: 10, AppName: "game.exe", Period100ns: 5000},
		{ID: 63, Version: 1, PID: 20, AppName: "a.exe", Period100ns: 10000},
	}}
	var show showRecorder
	rep, err := inspect.Who(context.Background(), simtest.NewWindows(t, "narrow-band"), sys, 50*time.Millisecond, &show)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Windows.Holders) != 1 || rep.Windows.Rundown.Current100ns != 5000 || rep.Windows.Sleep1 != nil {
		t.Errorf("windows = %+v", rep.Windows)
	}
	if len(rep.Changes) != 1 || rep.Changes[0].PID != 20 || !rep.Changes[0].Started || len(show.changes) != 1 {
		t.Errorf("changes = %+v (shown %+v)", rep.Changes, show.changes)
	}
	if rep.Watch == nil || len(rep.Watch.Held) != 2 {
		t.Errorf("summary = %+v", rep.Watch)
	}

	// A session that fails ends the watch with its error.
	sys = &sim.System{IsElevated: true, Snapshots: []*who.Snapshot{snap}, EventsErr: errors.New("ProcessTrace: 1223")}
	if _, err := inspect.Who(context.Background(), simtest.NewWindows(t, "narrow-band"), sys, time.Second, nil); err == nil || err.Error() != "ProcessTrace: 1223" {
		t.Errorf("a failing session: error %v", err)
	}
}

// Linux: the scan is the report; --watch polls it.
func TestWhoLinuxWatch(t *testing.T) {
	seven := int32(7)
	before := &who.Snapshot{Linux: &who.Linux{CPUDMALatencyUs: &seven, DMALatencyHolders: []who.Process{{PID: 5, Name: "tickscope"}}}}
	after := &who.Snapshot{Linux: &who.Linux{}}
	sys := &sim.System{Snapshots: []*who.Snapshot{before, after}, NoEvents: true}
	rep, err := inspect.Who(context.Background(), &linuxHost{dma: 7}, sys, 30*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Linux != before.Linux || rep.Windows != nil {
		t.Errorf("report = %+v", rep)
	}
	if len(rep.Changes) != 2 || rep.Changes[0].Started || rep.Changes[1].Started {
		t.Errorf("changes = %+v, want the holder and the value in force ending", rep.Changes)
	}
}

func TestCheckWatch(t *testing.T) {
	if err := inspect.CheckWatch(false, 0); err != nil {
		t.Errorf("not given: %v", err)
	}
	if err := inspect.CheckWatch(true, time.Second); err != nil {
		t.Errorf("1s: %v", err)
	}
	for _, d := range []time.Duration{0, -time.Second} {
		if err := inspect.CheckWatch(true, d); !isUsage(err) {
			t.Errorf("--watch %v: %v, want a usage error", d, err)
		}
	}
}

// queryAfter is a host whose current period changes to current100ns after
// its first query: another program's request, as the not-elevated watch
// can see it.
type queryAfter struct {
	*simtest.WindowsHost
	queries      int
	current100ns uint32
}

func (h *queryAfter) Query() (*timerinfo.Report, error) {
	q, err := h.WindowsHost.Query()
	if h.queries++; err == nil && h.queries > 1 {
		q.Windows.Current100ns = h.current100ns
	}
	return q, err
}

// Not elevated on Windows, --watch follows the current period (it cannot
// follow the holders), says so, and reports each change of it.
func TestWhoWindowsNotElevatedWatchFollowsThePeriod(t *testing.T) {
	sys := &sim.System{HoldersErr: errors.New("must not be called"), EventsErr: errors.New("must not be called")}
	host := &queryAfter{WindowsHost: simtest.NewWindows(t, "narrow-band"), current100ns: 10000}
	var show showRecorder
	rep, err := inspect.Who(context.Background(), host, sys, 50*time.Millisecond, &show)
	if err != nil {
		t.Fatal(err)
	}
	if rep.WatchNote != inspect.WatchPeriodOnly || rep.Watch == nil {
		t.Fatalf("report = %+v, want the period watched and said so", rep)
	}
	before := int64(rep.Windows.Current100ns)
	want := []who.Change{{Hold: who.Hold{Name: "the timer", What: who.WhatTimer, Value: before}}, {Started: true, Hold: who.Hold{Name: "the timer", What: who.WhatTimer, Value: 10000}}}
	if len(rep.Changes) != 2 || rep.Changes[0].Hold != want[0].Hold || rep.Changes[0].Started || rep.Changes[1].Hold != want[1].Hold || !rep.Changes[1].Started || len(show.changes) != 2 {
		t.Errorf("changes = %+v, want %d x 100ns ending and 10000 beginning", rep.Changes, before)
	}
}

// Watching with nothing changing still reports changes: [], not absent.
func TestWhoWatchWithoutChangesSaysNone(t *testing.T) {
	snap := &who.Snapshot{Linux: &who.Linux{}}
	sys := &sim.System{Snapshots: []*who.Snapshot{snap}, NoEvents: true}
	rep, err := inspect.Who(context.Background(), &linuxHost{dma: 7}, sys, 20*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(rep)
	if !strings.Contains(string(out), `"changes":[]`) {
		t.Errorf("JSON %s lacks \"changes\":[]", out)
	}
	rep, _ = inspect.Who(context.Background(), &linuxHost{dma: 7}, sys, 0, nil)
	if out, _ := json.Marshal(rep); strings.Contains(string(out), `"changes"`) {
		t.Errorf("JSON without --watch has changes: %s", out)
	}
}

// Not elevated, the interrupt period is measured from the interrupt
// time's steps: on the model where another process holds 0.5 ms and
// requests are per-process, 0.5 ms, while Sleep(1) stays near 15.6 ms.
func TestWhoWindowsNotElevatedMeasuresTheInterruptTick(t *testing.T) {
	host := simtest.NewWindows(t, "contaminated")
	rep, err := inspect.Who(context.Background(), host, &sim.System{}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	tick := rep.Windows.InterruptTick
	if tick == nil || !tick.Quantised || tick.Period100ns != 5000 || !strings.HasPrefix(tick.Source, "simulated") {
		t.Errorf("interrupt tick %+v, want the other process's 5000, labelled simulated", tick)
	}
	if rep.Windows.Sleep1 == nil || rep.Windows.Sleep1.P50Ns < 10_000_000 {
		t.Errorf("Sleep(1) %+v: the model should keep it near 15.6 ms here", rep.Windows.Sleep1)
	}
}
