package who

import (
	"cmp"
	"context"
	"errors"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/timerinfo"
)

// What a hold is (Hold.What).
const (
	WhatPeriod     = "timer period"           // Windows: a process's request, Value in 100 ns
	WhatTimer      = "timer period in force"  // Windows: the machine's period, Value in 100 ns
	WhatDMALatency = "cpu_dma_latency holder" // Linux: the device held open, Value 0 (the kernel does not say what each asked)
	WhatDMAInForce = "cpu_dma_latency in force"
	WhatSlack      = "timer slack" // Linux: Value in ns
	WhatRealTime   = "real-time"   // Linux: Value is the priority; Name carries the policy
)

// Hold is one thing a process (or thread) holds, as --watch tracks it.
type Hold struct {
	PID   int    `json:"pid"`
	TID   int    `json:"tid,omitempty"`
	Name  string `json:"name"`
	What  string `json:"what"`
	Value int64  `json:"value"`
}

// Holds flattens a snapshot into what --watch tracks: every holder, and
// the value in force.
func (s *Snapshot) Holds() []Hold {
	var out []Hold
	if w := s.Windows; w != nil {
		for _, h := range w.Holders {
			out = append(out, Hold{PID: int(h.PID), Name: h.Image, What: WhatPeriod, Value: int64(h.Period100ns)})
		}
		if w.Timer != nil {
			out = append(out, Hold{Name: "the timer", What: WhatTimer, Value: int64(w.Timer.Current100ns)})
		}
	}
	if l := s.Linux; l != nil {
		// The kernel's default is no request: nothing is held.
		if l.CPUDMALatencyUs != nil && *l.CPUDMALatencyUs < timerinfo.DMALatencyDefaultUs {
			out = append(out, Hold{Name: DMALatencyDevice, What: WhatDMAInForce, Value: int64(*l.CPUDMALatencyUs)})
		}
		for _, p := range l.DMALatencyHolders {
			out = append(out, Hold{PID: p.PID, Name: p.Name, What: WhatDMALatency})
		}
		for _, t := range l.Slack {
			out = append(out, Hold{PID: t.PID, TID: t.TID, Name: t.Name, What: WhatSlack, Value: t.SlackNs})
		}
		for _, t := range l.RealTime {
			out = append(out, Hold{PID: t.PID, TID: t.TID, Name: t.Name + " " + t.Policy, What: WhatRealTime, Value: int64(t.Priority)})
		}
	}
	return out
}

// ApplyEvent is the holds after a Kernel-Power event: a request (63 with
// a period, or 97 from the rundown) replaces the process's earlier one, a
// release (63 with period 0) ends it, and 95 and 96 set the timer's
// period. Other events change nothing.
func ApplyEvent(holds []Hold, ev Event) []Hold {
	out := slices.Clone(holds)
	set := func(h Hold, same func(Hold) bool) {
		out = slices.DeleteFunc(out, same)
		if h.Value != 0 {
			out = append(out, h)
		}
	}
	switch ev.ID {
	case EventTimeResolutionChange, EventTimeResolutionRequestRundown:
		pid := int(ev.PID)
		set(Hold{PID: pid, Name: ev.AppName, What: WhatPeriod, Value: int64(ev.Period100ns)},
			func(h Hold) bool { return h.What == WhatPeriod && h.PID == pid })
	case EventTimeResolutionUpdate, EventTimeResolutionRundown:
		set(Hold{Name: "the timer", What: WhatTimer, Value: int64(ev.Period100ns)},
			func(h Hold) bool { return h.What == WhatTimer })
	}
	return out
}

// Change is a hold that started or ended.
type Change struct {
	At      time.Time `json:"at"`
	Started bool      `json:"started"`
	Hold
}

// Tracker follows holds over time and accumulates how long each was held.
type Tracker struct {
	start   time.Time
	since   map[Hold]time.Time // the holds now, and since when
	total   map[Hold]time.Duration
	atStart map[Hold]bool
}

// NewTracker starts tracking at start with the holds in force then (held
// for an unknown time before it).
func NewTracker(start time.Time, initial []Hold) *Tracker {
	t := &Tracker{start: start, since: map[Hold]time.Time{}, total: map[Hold]time.Duration{}, atStart: map[Hold]bool{}}
	for _, h := range initial {
		t.since[h] = start
		t.atStart[h] = true
	}
	return t
}

// Current is the holds in force now.
func (t *Tracker) Current() []Hold {
	out := make([]Hold, 0, len(t.since))
	for h := range t.since {
		out = append(out, h)
	}
	sortHolds(out)
	return out
}

// Set makes holds the holds in force at at, and returns what started and
// ended, ended first.
func (t *Tracker) Set(at time.Time, holds []Hold) []Change {
	now := map[Hold]bool{}
	for _, h := range holds {
		now[h] = true
	}
	var ended, started []Change
	for h, since := range t.since {
		if !now[h] {
			t.total[h] += max(at.Sub(since), 0)
			delete(t.since, h)
			ended = append(ended, Change{At: at, Hold: h})
		}
	}
	for h := range now {
		if _, held := t.since[h]; !held {
			t.since[h] = at
			started = append(started, Change{At: at, Started: true, Hold: h})
		}
	}
	sortChanges(ended)
	sortChanges(started)
	return append(ended, started...)
}

// Summary is how long each thing was held while tickscope watched.
type Summary struct {
	WatchedNs int64     `json:"watched_ns"`
	Held      []HeldFor `json:"held"`
}

// HeldFor is one hold and how long it was held while watched.
type HeldFor struct {
	Hold
	HeldNs int64 `json:"held_ns"`
	// AtStart: already held when watching began, so held longer than
	// HeldNs. AtEnd: still held when it ended.
	AtStart bool `json:"at_start"`
	AtEnd   bool `json:"at_end"`
}

// Summary closes the watch at end.
func (t *Tracker) Summary(end time.Time) *Summary {
	total := map[Hold]time.Duration{}
	for h, d := range t.total {
		total[h] = d
	}
	for h, since := range t.since {
		total[h] += max(end.Sub(since), 0)
	}
	s := &Summary{WatchedNs: int64(end.Sub(t.start)), Held: []HeldFor{}}
	for h, d := range total {
		_, atEnd := t.since[h]
		s.Held = append(s.Held, HeldFor{Hold: h, HeldNs: int64(d), AtStart: t.atStart[h], AtEnd: atEnd})
	}
	slices.SortFunc(s.Held, func(a, b HeldFor) int { return cmp.Or(compareHolds(a.Hold, b.Hold), cmp.Compare(b.HeldNs, a.HeldNs)) })
	return s
}

func compareHolds(a, b Hold) int {
	return cmp.Or(strings.Compare(a.What, b.What), cmp.Compare(a.Value, b.Value), cmp.Compare(a.PID, b.PID), cmp.Compare(a.TID, b.TID), strings.Compare(a.Name, b.Name))
}

func sortHolds(h []Hold) { slices.SortFunc(h, compareHolds) }

func sortChanges(c []Change) {
	slices.SortFunc(c, func(a, b Change) int { return compareHolds(a.Hold, b.Hold) })
}

// Poll watches from the snapshot first by reading one every interval
// until ctx ends (Linux, where nothing announces a change), calling
// changed for each change, and returns the summary. A watch that lasts
// its time (ctx's deadline) reads once more as it ends, so what changed
// within it is reported however the interval and the deadline fall on a
// loaded machine; one stopped early (cancelled) ends at once. A read that
// fails ends the watch with its error and the summary so far.
func Poll(ctx context.Context, interval time.Duration, first *Snapshot, read func() (*Snapshot, error), now func() time.Time, changed func(Change)) (*Summary, error) {
	t := NewTracker(now(), first.Holds())
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		last := false
		select {
		case <-ctx.Done():
			if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return t.Summary(now()), nil
			}
			last = true
		case <-ticker.C:
		}
		snap, err := read()
		if err != nil {
			return t.Summary(now()), err
		}
		for _, c := range t.Set(now(), snap.Holds()) {
			changed(c)
		}
		if last {
			return t.Summary(now()), nil
		}
	}
}

// FollowTiming is how Follow reconciles: every Every, and at each change
// of the timer's period (event 95), it asks for a fresh rundown, read as
// ReadRundown reads one (Rundown).
type FollowTiming struct {
	Every   time.Duration
	Rundown RundownTiming
}

// DefaultFollowTiming asks for a rundown every 30 s: a process that exits
// holding a request may log no release (event 63 with period 0), and only
// a rundown that no longer names it says that it ended.
var DefaultFollowTiming = FollowTiming{Every: 30 * time.Second, Rundown: DefaultRundownTiming}

// rundownBatch collects a rundown asked for while watching.
type rundownBatch struct {
	holders map[int]Hold // by process id (event 97)
	timer   *Hold        // event 96
	at      time.Time    // event 96's time
	// touched are the process ids a request or release (63) named while
	// the batch was read, and whether the period changed (95): what they
	// say is newer than the rundown.
	touched      map[int]bool
	timerTouched bool
}

// Follow watches by applying Kernel-Power events as they come (Windows):
// subscribe delivers them until ctx ends, and asks for a fresh rundown at
// each value it receives on rundown. The first rundown's requests count as
// held since the start; changed is called for every change after them
// (the rundown is what the caller read and showed already). Every
// timing.Every, and at each change of the period, Follow asks for a
// rundown and, once it has gone quiet with the timer's own rundown (96) in
// it, reconciles: the holds it names are the ones in force, except what an
// event seen meanwhile says. It returns the summary. ETW does not order
// events across CPUs: a hold that seems to end before it began counts 0.
func Follow(ctx context.Context, subscribe func(ctx context.Context, rundown <-chan struct{}, each func(Event)) error, timing FollowTiming, now func() time.Time, changed func(Change)) (*Summary, error) {
	t := NewTracker(now(), nil)
	events := make(chan Event, 64)
	done := make(chan error, 1)
	ask := make(chan struct{}, 1)
	go func() { done <- subscribe(ctx, ask, func(ev Event) { events <- ev }) }()
	request := func() {
		select {
		case ask <- struct{}{}:
		default: // one is asked for already
		}
	}
	every := time.NewTicker(timing.Every)
	defer every.Stop()
	// The first rundown is applied as it comes, held since the start,
	// until it goes quiet; later ones are collected in batch.
	initial, initialTimer := true, false
	var batch *rundownBatch
	quiet := time.NewTimer(timing.Rundown.Most)
	defer quiet.Stop()
	apply := func(ev Event) {
		at := ev.At
		if at.IsZero() {
			at = now()
		}
		rundown := ev.ID == EventTimeResolutionRequestRundown || ev.ID == EventTimeResolutionRundown
		switch {
		case rundown && initial:
			if ev.ID == EventTimeResolutionRundown {
				initialTimer = true
			}
			if initialTimer {
				quiet.Reset(timing.Rundown.Quiet)
			}
			for _, c := range t.Set(t.start, ApplyEvent(t.Current(), ev)) {
				t.atStart[c.Hold] = c.Started // held before the watch began
			}
			return
		case rundown:
			if batch == nil {
				batch = &rundownBatch{holders: map[int]Hold{}, touched: map[int]bool{}}
				quiet.Reset(timing.Rundown.Most)
			}
			if ev.ID == EventTimeResolutionRequestRundown {
				batch.holders[int(ev.PID)] = Hold{PID: int(ev.PID), Name: ev.AppName, What: WhatPeriod, Value: int64(ev.Period100ns)}
			} else {
				batch.timer, batch.at = &Hold{Name: "the timer", What: WhatTimer, Value: int64(ev.Period100ns)}, at
			}
			if batch.timer != nil {
				quiet.Reset(timing.Rundown.Quiet)
			}
			return
		}
		if batch != nil {
			batch.touched[int(ev.PID)] = batch.touched[int(ev.PID)] || ev.ID == EventTimeResolutionChange
			batch.timerTouched = batch.timerTouched || ev.ID == EventTimeResolutionUpdate
		}
		for _, c := range t.Set(at, ApplyEvent(t.Current(), ev)) {
			changed(c)
		}
		if ev.ID == EventTimeResolutionUpdate {
			request()
		}
	}
	reconcile := func() {
		b := batch
		batch = nil
		if b == nil || b.timer == nil {
			return // not known to be whole: nothing is dropped on its word
		}
		var holds []Hold
		for _, h := range t.Current() {
			if (h.What == WhatPeriod && b.touched[h.PID]) || (h.What == WhatTimer && b.timerTouched) {
				holds = append(holds, h)
			}
		}
		for pid, h := range b.holders {
			if !b.touched[pid] && h.Value != 0 {
				holds = append(holds, h)
			}
		}
		if !b.timerTouched {
			holds = append(holds, *b.timer)
		}
		for _, c := range t.Set(b.at, holds) {
			changed(c)
		}
	}
	for {
		select {
		case ev := <-events:
			apply(ev)
		case <-quiet.C:
			if initial {
				initial = false
				continue
			}
			reconcile()
		case <-every.C:
			request()
		case err := <-done:
			for len(events) > 0 { // delivered before subscribe returned
				apply(<-events)
			}
			return t.Summary(now()), err
		}
	}
}

// Base is the file name of a Windows image path (\Device\...\game.exe).
func Base(image string) string { return path.Base(strings.ReplaceAll(image, `\`, "/")) }
