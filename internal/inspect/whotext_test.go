package inspect_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/inspect"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/waitcheck"
	"github.com/tickscope/tickscope/internal/who"
)

func TestWhoTextWindows(t *testing.T) {
	rep := &inspect.WhoReport{OS: "windows", Elevated: true, Windows: &inspect.WhoWindows{
		Coarsest100ns: 156250, Finest100ns: 5000, Current100ns: 5000,
		Holders: []who.Holder{
			{PID: 4321, Image: `\Device\HarddiskVolume3\Games\game.exe`, Period100ns: 5000},
			{PID: 99, Image: `\Device\HarddiskVolume3\tickscope.exe`, Period100ns: 10000, Self: true},
		},
		Rundown: &who.TimerRundown{Current100ns: 5000, KernelRequests: 1, KernelRequested100ns: 10000},
	}}
	var out bytes.Buffer
	text := &inspect.WhoText{W: &out}
	text.Read(rep)
	at := time.Date(2026, 11, 30, 12, 0, 1, 0, time.Local)
	text.Changed(who.Change{At: at, Hold: who.Hold{PID: 4321, Name: "game.exe", What: who.WhatPeriod, Value: 5000}})
	rep.Watch = &who.Summary{WatchedNs: int64(10 * time.Second), Held: []who.HeldFor{{Hold: who.Hold{PID: 4321, Name: "game.exe", What: who.WhatPeriod, Value: 5000}, HeldNs: int64(time.Second), AtStart: true}}}
	inspect.WriteWhoSummary(&out, rep)
	got := out.String()
	for _, want := range []string{
		"  current        0.5000 ms (5000 x 100ns)\n",
		"  the kernel     1 request(s), finest 1.0000 ms (10000 x 100ns)\n",
		"holders, finest first\n",
		"  0.5000     4321     \\Device\\HarddiskVolume3\\Games\\game.exe\n",
		"  1.0000     99       \\Device\\HarddiskVolume3\\tickscope.exe  (tickscope)\n",
		"\n12:00:01.000  ended: process 4321 game.exe holds 0.5000 ms\n",
		"while watched (10s)\n  1s         process 4321 game.exe holds 0.5000 ms (already at the start)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("who's text lacks %q:\n%s", want, got)
		}
	}
}

func TestWhoTextWindowsNotElevated(t *testing.T) {
	rep := &inspect.WhoReport{OS: "windows", Windows: &inspect.WhoWindows{Coarsest100ns: 156250, Finest100ns: 5000, Current100ns: 156250,
		NeedsElevation: who.NeedsElevation, Sleep1: &waitcheck.Check{Method: "sleep", Samples: 50, P50Ns: 15_600_000, P99Ns: 15_700_000}}}
	var out bytes.Buffer
	(&inspect.WhoText{W: &out}).Read(rep)
	got := out.String()
	for _, want := range []string{
		"  tickscope      holds a request: no\n",
		"  here now, no request       sleep 1 ms takes p50 15.6000 ms",
		"holders: unknown: naming the processes that hold the timer needs an elevated terminal",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("who's text lacks %q:\n%s", want, got)
		}
	}
}

// The summary rounds the time watched and each time held alike: no row
// shows more than the whole.
func TestWhoSummaryRoundsOnce(t *testing.T) {
	h := who.Hold{PID: 7, Name: "a.exe", What: who.WhatPeriod, Value: 10000}
	rep := &inspect.WhoReport{Watch: &who.Summary{WatchedNs: 2_764_400_000, Held: []who.HeldFor{{Hold: h, HeldNs: 2_763_600_000}}}}
	var out bytes.Buffer
	inspect.WriteWhoSummary(&out, rep)
	if want := "while watched (2.764s)\n  2.764s     process 7"; !strings.Contains(out.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, out.String())
	}
}

// A read stopped before the rundown ended says its list may be partial,
// and an empty one is unknown, not "no process holds".
func TestWhoTextSaysAnIncompleteRundown(t *testing.T) {
	for _, tc := range []struct {
		holders []who.Holder
		want    string
	}{
		{nil, "holders: unknown: stopped before the Kernel-Power rundown named any\n"},
		{[]who.Holder{{PID: 4, Image: "a.exe", Period100ns: 5000}}, "holders, finest first (partial: stopped before the rundown ended, there may be more)\n"},
	} {
		rep := &inspect.WhoReport{OS: "windows", Elevated: true, Windows: &inspect.WhoWindows{Current100ns: 5000, Holders: tc.holders, HoldersIncomplete: true}}
		var out bytes.Buffer
		(&inspect.WhoText{W: &out}).Read(rep)
		if got := out.String(); !strings.Contains(got, tc.want) || strings.Contains(got, "no process holds") {
			t.Errorf("who's text lacks %q:\n%s", tc.want, got)
		}
	}
}

// The interrupt period measured from the interrupt time's steps is named
// for what it is; a clock that does not step says so.
func TestWhoTextSaysTheInterruptTick(t *testing.T) {
	for _, tc := range []struct {
		tick timerinfo.InterruptTick
		want string
	}{
		{timerinfo.InterruptTick{Source: "QueryUnbiasedInterruptTime read in a loop for 100ms", Reads: 5e6, Steps: []timerinfo.Step{{Size100ns: 10000, Count: 99}}, Period100ns: 10000, Quantised: true},
			"  interrupt now  1.0000 ms (10000 x 100ns): the step of the interrupt time (QueryUnbiasedInterruptTime read in a loop for 100ms, 99 steps)\n"},
		{timerinfo.InterruptTick{Source: "wine", Reads: 1000, Steps: []timerinfo.Step{{Size100ns: 3, Count: 900}}},
			"  interrupt now  unknown: no regular steps seen: this system's interrupt time is not tick-quantised (wine, changed at 900 of 1000 reads, by 1 different amounts)\n"},
	} {
		rep := &inspect.WhoReport{OS: "windows", Windows: &inspect.WhoWindows{Current100ns: 10000, NeedsElevation: who.NeedsElevation, InterruptTick: &tc.tick}}
		var out bytes.Buffer
		(&inspect.WhoText{W: &out}).Read(rep)
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("who's text lacks %q:\n%s", tc.want, out.String())
		}
	}
}

// TestWhoTextTellsNamesApart: two processes whose names differ show
// differently (lit\x1b typed as it is, and lit followed by ESC, once
// both showed lit\x1b), while a path's backslashes read as typed.
func TestWhoTextTellsNamesApart(t *testing.T) {
	var b bytes.Buffer
	rep := &inspect.WhoReport{OS: "linux", Elevated: true, Linux: &who.Linux{
		DMALatencyHolders: []who.Process{{PID: 7, Name: `lit\x1b`}, {PID: 8, Name: "lit\x1b"}},
		Slack:             []who.Thread{{PID: 7, TID: 7, Name: `lit\x1b`, SlackNs: 1}, {PID: 8, TID: 8, Name: "lit\x1b", SlackNs: 1}},
	}}
	(&inspect.WhoText{W: &b}).Read(rep)
	(&inspect.WhoText{W: &b}).Changed(who.Change{At: time.Unix(0, 0), Started: true, Hold: who.Hold{PID: 7, Name: `lit\x1b`, What: who.WhatDMALatency}})
	(&inspect.WhoText{W: &b}).Changed(who.Change{At: time.Unix(0, 0), Started: true, Hold: who.Hold{PID: 8, Name: "lit\x1b", What: who.WhatDMALatency}})
	rep = &inspect.WhoReport{OS: "windows", Elevated: true, Windows: &inspect.WhoWindows{Coarsest100ns: 156250, Finest100ns: 5000, Current100ns: 5000,
		Holders: []who.Holder{{PID: 4, Image: `\Device\HarddiskVolume3\bin\x64\game.exe`, Period100ns: 5000}, {PID: 5, Image: "lit\x1b", Period100ns: 5000}}}}
	(&inspect.WhoText{W: &b}).Read(rep)
	out := b.String()
	for _, want := range []string{
		`process 7 lit\\x1b` + "\n", `process 8 lit\x1b` + "\n",
		`process 7 thread 7 lit\\x1b` + "\n", `process 8 thread 8 lit\x1b` + "\n",
		`began: process 7 lit\\x1b holds`, `began: process 8 lit\x1b holds`,
		` 4        \Device\HarddiskVolume3\bin\x64\game.exe` + "\n", ` 5        lit\x1b` + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("who does not show %q:\n%s", want, out)
		}
	}
}
