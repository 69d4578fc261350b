package inspect

import (
	"context"
	"errors"
	"time"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/waitcheck"
	"github.com/tickscope/tickscope/internal/who"
)

// WhoReport is what `tickscope who` prints as JSON.
type WhoReport struct {
	OS       string      `json:"os"`
	Elevated bool        `json:"elevated"`
	Windows  *WhoWindows `json:"windows,omitempty"`
	Linux    *who.Linux  `json:"linux,omitempty"`
	// Changes and Watch are --watch's: each change seen ([] while watching
	// when nothing changed; omitzero keeps an empty slice, drops nil), and
	// how long each thing was held while watched.
	Changes []who.Change `json:"changes,omitzero"`
	Watch   *who.Summary `json:"watch,omitempty"`
	// WatchNote says what --watch follows when it cannot follow the
	// holders (WatchPeriodOnly).
	WatchNote string `json:"watch_note,omitempty"`
}

// WhoWindows is who on Windows: the timer as NtQueryTimerResolution gives
// it, and the holders when elevated.
type WhoWindows struct {
	Coarsest100ns       uint32 `json:"coarsest_100ns"`
	Finest100ns         uint32 `json:"finest_100ns"`
	Current100ns        uint32 `json:"current_100ns"`
	ProcessHoldsRequest bool   `json:"process_holds_request"`
	// Holders are the processes holding a request, finest first; nil when
	// they could not be read (NeedsElevation says why).
	Holders []who.Holder      `json:"holders"`
	Rundown *who.TimerRundown `json:"rundown"`
	// HoldersIncomplete: the read was stopped (ESC, Ctrl+C) before the
	// rundown ended, so Holders may lack some.
	HoldersIncomplete bool `json:"holders_incomplete,omitempty"`
	// NeedsElevation is set when not elevated: ETW needs an administrator.
	NeedsElevation string `json:"needs_elevation,omitempty"`
	// InterruptTick is the clock interrupt period running now, measured
	// from the steps of the interrupt time, when the holders cannot be
	// named: the rate the finest request of any process set.
	InterruptTick *timerinfo.InterruptTick `json:"interrupt_tick,omitempty"`
	// Sleep1 is Sleep(1) in this process, measured now, when the holders
	// cannot be named: what the timer gives a process that asks nothing.
	Sleep1 *waitcheck.Check `json:"sleep_1ms,omitempty"`
}

// WatchPollInterval is how often who --watch reads /proc again on Linux,
// where nothing announces a change: often enough to see a program hold
// something for a few seconds, rarely enough to cost nothing measurable.
const WatchPollInterval = time.Second

// WhoShow is how who shows its progress as it goes (text), or nil (JSON,
// printed at the end).
type WhoShow interface {
	// Read shows the holders as first read, before any watch.
	Read(*WhoReport)
	// Changed shows one change as it happens.
	Changed(who.Change)
}

// Who reads who holds the timer (sys.Holders) and, for watch > 0, keeps
// watching for that long or until ctx ends (ESC, Ctrl+C), recording each
// change as it happens, then sums up. On Windows without elevation it
// reports what can be known instead: the periods, whether this process
// holds a request, and Sleep(1) measured now; its --watch follows the
// current period, read every WatchPollInterval (WatchNote says so).
func Who(ctx context.Context, host seam.Host, sys WhoSystem, watch time.Duration, show WhoShow) (*WhoReport, error) {
	q, err := host.Query()
	if err != nil {
		return nil, err
	}
	rep := &WhoReport{OS: q.OS, Elevated: sys.Elevated()}
	if w := q.Windows; w != nil {
		rep.Windows = &WhoWindows{Coarsest100ns: w.Coarsest100ns, Finest100ns: w.Finest100ns, Current100ns: w.Current100ns, ProcessHoldsRequest: w.ProcessHoldsRequest}
		if !rep.Elevated {
			rep.Windows.NeedsElevation = who.NeedsElevation
			if rep.Windows.InterruptTick, err = InterruptTick(host); err != nil {
				return rep, err
			}
			if rep.Windows.Sleep1, err = waitcheck.Measure(ctx, host, q, timerinfo.Setting{}); err != nil {
				return rep, err
			}
			if watch > 0 {
				rep.WatchNote = WatchPeriodOnly
			}
			if show != nil {
				show.Read(rep)
			}
			return rep, rep.watch(ctx, watch, show, func(ctx context.Context, record func(who.Change)) (*who.Summary, error) {
				read := func() (*who.Snapshot, error) {
					q, err := host.Query()
					if err != nil {
						return nil, err
					}
					return periodSnapshot(q.Windows.Current100ns), nil
				}
				return who.Poll(ctx, min(watch, WatchPollInterval), periodSnapshot(w.Current100ns), read, time.Now, record)
			})
		}
	}
	snap, err := sys.Holders(ctx)
	if err != nil {
		return nil, err
	}
	rep.fill(snap)
	if show != nil {
		show.Read(rep)
	}
	return rep, rep.watch(ctx, watch, show, func(ctx context.Context, record func(who.Change)) (*who.Summary, error) {
		if rep.Windows != nil {
			return who.Follow(ctx, sys.HolderEvents, who.DefaultFollowTiming, time.Now, record)
		}
		read := func() (*who.Snapshot, error) { return sys.Holders(ctx) }
		return who.Poll(ctx, min(watch, WatchPollInterval), snap, read, time.Now, record)
	})
}

// InterruptPoll is how long InterruptTick reads the interrupt time: a few
// ticks of the coarsest period (15.6 ms).
const InterruptPoll = 100 * time.Millisecond

// InterruptTick measures the clock interrupt period running now from the
// steps of the host's interrupt time (seam.InterruptClock), nil where the
// host keeps none.
func InterruptTick(host seam.Host) (*timerinfo.InterruptTick, error) {
	clock, ok := host.(seam.InterruptClock)
	if !ok {
		return nil, nil
	}
	source, reads, values, err := clock.PollInterruptTime(InterruptPoll)
	if err != nil {
		return nil, err
	}
	tick := timerinfo.AnalyseInterruptTime(source, reads, values)
	return &tick, nil
}

// WatchPeriodOnly is WatchNote on Windows without elevation.
const WatchPeriodOnly = "not elevated: --watch follows the timer's current period, read every second, not who holds it"

// periodSnapshot is the timer's current period as the one thing --watch
// follows without elevation (who.WhatTimer).
func periodSnapshot(current100ns uint32) *who.Snapshot {
	return &who.Snapshot{Windows: &who.Windows{Holders: []who.Holder{}, Timer: &who.TimerRundown{Current100ns: current100ns}}}
}

// watch runs follow, which watches, for watch (nothing when 0) or until
// ctx ends, recording each change in rep and showing it; its summary is
// rep.Watch.
func (rep *WhoReport) watch(ctx context.Context, watch time.Duration, show WhoShow, follow func(context.Context, func(who.Change)) (*who.Summary, error)) error {
	if watch <= 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, watch)
	defer cancel()
	rep.Changes = []who.Change{}
	record := func(c who.Change) {
		rep.Changes = append(rep.Changes, c)
		if show != nil {
			show.Changed(c)
		}
	}
	var err error
	rep.Watch, err = follow(ctx, record)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		err = nil
	}
	return err
}

// fill puts a snapshot's holders in the report.
func (rep *WhoReport) fill(snap *who.Snapshot) {
	if snap.Windows != nil && rep.Windows != nil {
		rep.Windows.Holders, rep.Windows.Rundown = snap.Windows.Holders, snap.Windows.Timer
		rep.Windows.HoldersIncomplete = snap.Windows.Incomplete
	}
	rep.Linux = snap.Linux
}

// CheckWatch checks who's --watch: a duration above 0, when given.
func CheckWatch(given bool, d time.Duration) error {
	if given && d <= 0 {
		return options.BadFlag("watch", d, "allowed: a duration above 0 (how long to watch)")
	}
	return nil
}

// WhoHelp is who's --help.
const WhoHelp = `Name the processes that hold the timer, and what they hold.

It changes nothing on the machine but its own ETW session (Windows), which it
always removes.

Windows: every process holding a timer request now (NtSetTimerResolution or
timeBeginPeriod), finest first, with its process id, image and period, and
the current period; tickscope's own request is marked. It reads the rundown
of the Microsoft-Windows-Kernel-Power provider in an ETW session named
"tickscope-who", which needs an elevated terminal. Without elevation it says
so and shows what can be known: the current, finest and coarsest period
(the current one is the interrupt period in force, as Windows reports it),
whether tickscope holds a request, the interrupt period measured now (the
steps of the interrupt time, QueryUnbiasedInterruptTime read in a loop for
100 ms: it advances only at each clock interrupt, so its step is the period
running, set by the finest request of any process), and Sleep(1) measured
now in tickscope, which asks for nothing: it follows the interrupt where
requests are global, and stays near 15.6 ms where they are per-process,
however fast the interrupt runs for others.

Linux: the processes holding /dev/cpu_dma_latency open and the value in
force, the threads whose timer slack is not the default 50 µs, the threads
scheduled SCHED_FIFO or SCHED_RR, and the cpuidle states disabled. Without
root it says what it could not read (another user's open files; any
thread's timer slack, which needs CAP_SYS_NICE, the user's own included).

--watch D keeps watching for D, or until ESC or Ctrl+C, prints each change
with its time, then how long each thing was held. Windows stays subscribed
to the provider's events as they happen (a request, a release, the timer's
period), and asks for a fresh rundown every 30 s and at each change of the
period, so that a process that exited holding, which logs no release,
ends there; without elevation it follows only the current period, read every
second. Linux reads /proc again every second.

--json prints the result as the object documented in docs/json.md.`
