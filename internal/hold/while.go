package hold

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/timerstate"
	"github.com/tickscope/tickscope/internal/waitcheck"
)

// maxEvents bounds the events a hold keeps for its report: a startup
// holder runs for months, and a game may start thousands of times.
const maxEvents = 1000

// WhileReport is what a hold with --while did: the programs it watched
// for, each start and exit it saw, and how long the setting was held.
type WhileReport struct {
	Programs []string `json:"programs"`
	// User is --while-user as given, and UID (Linux) or SID (Windows) the
	// user it names: only that user's processes count (omitted: any
	// user's).
	User        string `json:"user,omitempty"`
	UID         *int   `json:"uid,omitempty"`
	SID         string `json:"sid,omitempty"`
	ScanEveryNs int64  `json:"scan_every_ns"`
	// Source is how the hold learns that a program starts or exits:
	// timerstate.SourceEvents (the kernel announces each exec and exit, and the
	// hold scans then, and every ScanEveryNs) or timerstate.SourceScan (a scan
	// every ScanEveryNs), as it ended. SourceError is why process events
	// were not used, or stopped being used ("" when the OS has none in
	// tickscope).
	Source      string `json:"source"`
	SourceError string `json:"source_error,omitempty"`
	// Events are the starts and exits seen, oldest first: the last
	// maxEvents of them, EventsDropped older ones left out.
	Events        []ProgramEvent `json:"events"`
	EventsDropped int            `json:"events_dropped,omitempty"`
	// Holds counts the times the setting was taken; HeldNs is the time it
	// was held in all.
	Holds  int   `json:"holds"`
	HeldNs int64 `json:"held_ns"`
	// Running are the watched processes running when the hold ended.
	Running []ProgramRunning `json:"running"`
}

// ProgramEvent is a watched program's process starting or exiting.
type ProgramEvent struct {
	Time time.Time `json:"time"`
	// AtNs is the time since the hold began.
	AtNs int64 `json:"at_ns"`
	// Event is EventStarted, EventExited or EventRetried.
	Event   string `json:"event"`
	Program string `json:"program"`
	PID     int    `json:"pid"`
	// NoticedAfterNs is, for a start, how long after the process started
	// the scan saw it, where the OS tells when it started.
	NoticedAfterNs *int64 `json:"noticed_after_ns,omitempty"`
	// Setting is what the event did to the setting: SettingHeld (the first
	// program to run, or a take tried again that succeeded),
	// SettingReleased (the last to exit), SettingFailed (taking it failed:
	// Error says why), or "" (another program was running already, or
	// still runs, and the setting is held).
	Setting string `json:"setting,omitempty"`
	// Granted is what the OS granted, when the setting was taken.
	Granted *timerinfo.Setting `json:"granted,omitempty"`
	// InForce is what the OS says is in force once the setting was taken
	// or released, read back: Windows' current period, Linux's
	// cpu_dma_latency (nil when unreadable).
	InForce *timerinfo.Setting `json:"in_force,omitempty"`
	Error   string             `json:"error,omitempty"`
	// Check is the first hold's check of the wait (HoldReport.Check), for
	// the text.
	Check *waitcheck.Check `json:"-"`
}

// What ProgramEvent says.
const (
	EventStarted = "started"
	EventExited  = "exited"
	// EventRetried is a take that had failed, tried again at a later scan
	// while a program runs, succeeding: the event names the first of the
	// programs' processes running.
	EventRetried    = "retried"
	SettingHeld     = "held"
	SettingReleased = "released"
	SettingFailed   = "failed"
)

// whileHold is a hold that holds its setting only while one of its programs
// runs: it scans for them every timerstate.ScanEvery, takes the setting when
// the first starts and releases it when the last exits.
type whileHold struct {
	host     seam.Host
	scanner  seam.ProgramScanner
	q        *timerinfo.Report
	req      timerinfo.Setting
	o        HoldOptions
	rep      *HoldReport
	start    time.Time
	ctx      context.Context
	programs []string
	running  map[int]seam.ProgramProcess
	// k holds the setting while a program runs, nil otherwise.
	k         *keeper
	heldSince time.Time
	reapplies int
	// events is the event source (nil: none, or it failed), end what the
	// hold waits on, settle the timer that lets announcements settle
	// before they are taken (nil while none runs), and lastAnnounced the
	// last scan they caused.
	events        seam.ProgramEvents
	end           *endWatch
	settle        *time.Timer
	lastAnnounced time.Time
	// tracked are the processes whose exits the source was last told to
	// announce (Track), nil before the first.
	tracked []int
	// every is the scan's interval without events (and while a scan or
	// a take fails), tick the one the scan ticker runs at.
	every, tick time.Duration
	// scanErr and takeErr are the last scan's and take's failure already
	// warned of, so that one failing every second is warned of once;
	// takeErr is forgotten when no program runs, so that the next start's
	// failure is warned of again.
	scanErr, takeErr string
}

// holdWhile is Hold for HoldOptions.While: the throttling opt-out is made
// and the lock taken; it waits with nothing held and holds while a
// program runs, until the hold ends.
func holdWhile(ctx context.Context, host seam.Host, sys System, q *timerinfo.Report, req timerinfo.Setting, o HoldOptions, rep *HoldReport) (*HoldReport, error) {
	scanner, err := sys.ScanPrograms(o.While)
	if err != nil {
		return nil, err
	}
	defer scanner.Close()
	every := o.ScanEvery
	if every <= 0 {
		every = timerstate.ScanEvery
	}
	rep.While = &WhileReport{Programs: o.While, ScanEveryNs: int64(every), Source: timerstate.SourceScan, Events: []ProgramEvent{}, Running: []ProgramRunning{}}
	// The source is subscribed to before the first scan, so that nothing
	// that happens after that scan read a process goes unannounced.
	events, err := sys.ProgramEvents(o.While)
	switch {
	case err == nil:
		defer func() {
			if events != nil {
				events.Close()
			}
		}()
		rep.While.Source, rep.While.ScanEveryNs = timerstate.SourceEvents, int64(timerstate.EventScanEvery)
	case !errors.Is(err, seam.ErrUnsupported):
		rep.While.SourceError = err.Error()
	}
	if u := o.WhileUser; u != nil {
		rep.While.User = u.Name
		if u.SID != "" {
			rep.While.SID = u.SID
		} else {
			uid := u.UID
			rep.While.UID = &uid
		}
	}
	if w := q.Windows; w != nil && !w.RequestsGlobal() {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("requests are per-process here (%s), so the period held while %s runs reaches tickscope only, not the program; %s",
			w.RequestModel, strings.Join(o.While, " or "), w.GlobalAdvice()))
	}
	// What goes wrong is told at once and kept for the report, as Hold's.
	o.Warn = rep.warner(o.Warn)
	h := &whileHold{host: host, scanner: scanner, q: q, req: req, o: o, rep: rep, start: time.Now(), ctx: ctx,
		programs: o.While, running: map[int]seam.ProgramProcess{}, events: events, every: every, tick: time.Duration(rep.While.ScanEveryNs)}
	defer h.done()
	end := armEnd(ctx, sys, o, rep, time.Duration(rep.While.ScanEveryNs))
	defer end.close()
	h.end = end
	if events != nil {
		end.announced, end.onAnnounced = events.Ready(), h.announced
		end.settled, end.onSettled = h.settled, h.scanAnnounced
		defer func() {
			if h.settle != nil {
				h.settle.Stop()
			}
		}()
	}
	if o.Waiting != nil {
		o.Waiting(rep)
	}
	if o.NoConsole {
		if err := sys.DetachConsole(); err != nil {
			return nil, err
		}
	}
	h.scan()
	rep.EndedBy = end.wait(h.check, h.scan)
	h.done()
	rep.HeldNs = int64(time.Since(h.start))
	rep.Reapplies = h.reapplies
	rep.While.Running = h.runningList()
	return rep, nil
}

// announced is the event source saying that something was announced: the hold
// stops listening, and takes it once it has settled (timerstate.EventSettle,
// and at least timerstate.EventMinGap after the last scan announcements
// caused), so that a burst is one scan.
func (h *whileHold) announced() {
	h.end.announced = nil
	if h.settle == nil {
		h.settle = time.NewTimer(max(timerstate.EventSettle, time.Until(h.lastAnnounced.Add(timerstate.EventMinGap))))
	}
}

// scanAnnounced takes what was announced once it has settled, and scans
// when it matters (announcedScan). After a scan it takes again
// timerstate.EventMinGap later without listening, so that a steady stream of
// announcements (a build) wakes it at that pace only; once a take finds
// nothing that matters it listens again.
func (h *whileHold) scanAnnounced() {
	h.settle = nil
	if !h.announcedScan(h.events.Take(false)) {
		if h.events == nil {
			return
		}
		h.end.announced = h.events.Ready()
		if !h.announcedScan(h.events.Take(true)) {
			return
		}
		h.end.announced = nil
	}
	if h.events != nil {
		h.settle = time.NewTimer(timerstate.EventMinGap)
	}
}

// announcedScan scans for what was announced, and reports whether it did: a
// process that executed a program or renamed itself, one of the watched
// processes losing a thread (its last, maybe), or announcements lost, is a
// reason to scan; the rest (another process's threads exiting) is not. The
// scan reads the processes announced afresh, and only them and the processes
// running the programs, unless a watched process lost a thread (then it looks
// for every process, as its tick's scan does: one the program forked may run
// on) or announcements were lost (then every process is read afresh). A source
// that failed is dropped, and the hold scans every timerstate.ScanEvery from
// then on, saying so.
func (h *whileHold) announcedScan(c seam.ProcessChanges) bool {
	due, exited := c.Lost || len(c.Ran) > 0, false
	for _, pid := range c.Exited {
		if _, ok := h.running[pid]; ok {
			due, exited = true, true
		}
	}
	lost := c.Lost || len(c.Ran) > maxAnnounced
	if c.Err != nil {
		h.events.Close()
		h.events = nil
		h.end.announced = nil
		w := h.rep.While
		w.Source, w.SourceError, w.ScanEveryNs = timerstate.SourceScan, c.Err.Error(), int64(h.every)
		h.pace()
		h.warn(fmt.Sprintf("process events stopped (%v): looking for %s every %v instead", c.Err, strings.Join(h.programs, ", "), h.every))
		h.scan()
		return false
	}
	if !due {
		return false
	}
	h.lastAnnounced = time.Now()
	h.scanner.Hint(seam.ScanHint{PIDs: c.Ran, Only: !exited && !lost, All: lost})
	h.scan()
	return true
}

// maxAnnounced bounds the processes a scan reads afresh: past it, the
// scan reads every process afresh.
const maxAnnounced = 4096

// settled is the channel of the timer before the announced scan, nil
// while none is due.
func (h *whileHold) settled() <-chan time.Time {
	if h.settle == nil {
		return nil
	}
	return h.settle.C
}

// pace sets the scan ticker: every timerstate.EventScanEvery while events come
// and all is well, every timerstate.ScanEvery without them, and while the last
// scan failed or a program runs whose take failed (tried again at each scan),
// as without events.
func (h *whileHold) pace() {
	tick := h.every
	if h.events != nil && h.scanErr == "" && (h.k != nil || len(h.running) == 0) {
		tick = timerstate.EventScanEvery
	}
	if tick != h.tick && h.end != nil {
		h.tick = tick
		h.end.rescan(tick)
	}
}

// track tells the source whose exits to announce, when they changed:
// the watched processes running.
func (h *whileHold) track() {
	if h.events == nil {
		return
	}
	pids := make([]int, 0, len(h.running))
	for pid := range h.running {
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	if h.tracked != nil && slices.Equal(pids, h.tracked) {
		return
	}
	h.tracked = pids
	h.events.Track(pids)
}

// scan looks for the programs, reports each start and exit, and takes or
// releases the setting when the first starts or the last exits.
func (h *whileHold) scan() {
	found, err := h.scanner.Scan()
	now := time.Now()
	if err != nil {
		if msg := err.Error(); msg != h.scanErr {
			h.scanErr = msg
			h.warn(fmt.Sprintf("looking for %s: %v; looking again every %v", strings.Join(h.programs, ", "), err, h.every))
		}
		h.pace()
		return
	}
	defer h.pace()
	h.scanErr = ""
	for _, u := range h.scanner.Unreadable() {
		h.warn(fmt.Sprintf("process %d may be %s, but its executable's path could not be read (%v): it is not counted as %s while it runs",
			u.PID, h.programs[u.Program], u.Err, h.programs[u.Program]))
	}
	next := make(map[int]seam.ProgramProcess, len(found))
	for _, p := range found {
		if u := h.o.WhileUser; u != nil && !u.owns(p) {
			continue
		}
		next[p.PID] = p
	}
	// A process id that now runs another watched program, or started
	// again, is an exit and a start.
	same := func(a, b seam.ProgramProcess) bool { return a.Program == b.Program && a.Started.Equal(b.Started) }
	var exited, started []seam.ProgramProcess
	for pid, p := range h.running {
		if n, ok := next[pid]; !ok || !same(p, n) {
			exited = append(exited, p)
		}
	}
	for pid, p := range next {
		if was, ok := h.running[pid]; !ok || !same(was, p) {
			started = append(started, p)
		}
	}
	byPID := func(a, b seam.ProgramProcess) int { return cmp.Compare(a.PID, b.PID) }
	slices.SortFunc(exited, byPID)
	slices.SortFunc(started, byPID)
	h.running = next
	if len(next) == 0 {
		h.takeErr = ""
	}
	h.track()
	for i, p := range exited {
		e := h.event(now, EventExited, p)
		if i == len(exited)-1 && len(next) == 0 && h.k != nil {
			h.release(now)
			e.Setting, e.InForce = SettingReleased, inForceNow(h.host)
		}
		h.record(e)
	}
	for i, p := range started {
		e := h.event(now, EventStarted, p)
		if !p.Started.IsZero() {
			after := max(int64(now.Sub(p.Started)), 0)
			e.NoticedAfterNs = &after
		}
		if i == 0 && h.k == nil {
			h.take(now, &e)
		}
		h.record(e)
	}
	// A take that failed is tried again at each scan while a program runs,
	// and said again only when its error changes.
	if len(started) == 0 && len(next) > 0 && h.k == nil {
		first := h.runningList()[0]
		e := ProgramEvent{Time: now, AtNs: int64(now.Sub(h.start)), Event: EventRetried, Program: first.Program, PID: first.PID}
		if h.take(now, &e) {
			h.warn(fmt.Sprintf("holding %s for %s (pid %d) now, granted %s", h.req, first.Program, first.PID, e.Granted))
			h.record(e)
		}
	}
}

// owns reports whether the process p is the user's: its token's user is
// the user's SID on Windows, its real user id the user's on Linux. A
// process whose user could not be read is no one's.
func (u *ProgramUser) owns(p seam.ProgramProcess) bool {
	if u.SID != "" {
		return p.SID != "" && strings.EqualFold(p.SID, u.SID)
	}
	return p.UID >= 0 && p.UID == u.UID
}

func (h *whileHold) event(now time.Time, kind string, p seam.ProgramProcess) ProgramEvent {
	return ProgramEvent{Time: now, AtNs: int64(now.Sub(h.start)), Event: kind, Program: h.programs[p.Program], PID: p.PID}
}

// record keeps an event for the report and says it.
func (h *whileHold) record(e ProgramEvent) {
	w := h.rep.While
	if len(w.Events) == maxEvents {
		w.Events = append(w.Events[:0], w.Events[1:]...)
		w.EventsDropped++
	}
	w.Events = append(w.Events, e)
	h.changed(&e)
}

// changed tells HoldOptions.Changed of an event.
func (h *whileHold) changed(e *ProgramEvent) {
	if h.o.Changed != nil {
		h.o.Changed(WhileState{Programs: h.programs, Holding: h.k != nil, Running: h.runningList()}, e)
	}
}

// take requests the setting for the program of e, noting in e what came
// of it (a failure always; the warning only when its error is not the one
// warned of last); it reports whether the setting is held. The first take
// also checks the default wait with the setting in force, for the report.
func (h *whileHold) take(now time.Time, e *ProgramEvent) bool {
	granted, release, warnings, err := grant(h.host, h.q, h.req, h.warn)
	if err != nil {
		msg := err.Error()
		e.Setting, e.Error = SettingFailed, msg
		if msg != h.takeErr {
			h.takeErr = msg
			h.warn(fmt.Sprintf("holding %s for %s (pid %d) failed: %v; tried again every %v while it runs", h.req, e.Program, e.PID, err, h.every))
		}
		return false
	}
	h.takeErr = ""
	h.k = &keeper{host: h.host, req: h.req, granted: granted, target: keepTarget(h.req, granted), release: release, o: h.o}
	h.heldSince = now
	w := h.rep.While
	w.Holds++
	e.Setting, e.Granted, e.InForce = SettingHeld, &granted, inForceNow(h.host)
	for _, msg := range warnings {
		h.warn(msg)
	}
	if w.Holds == 1 {
		h.rep.Granted = granted
		if check, err := waitcheck.Measure(h.ctx, h.host, h.q, timerinfo.Setting{}); err == nil {
			h.rep.Check, e.Check = check, check
		} else {
			h.warn(fmt.Sprintf("checking the wait with the setting held: %v", err))
		}
	}
	if h.o.Checked != nil {
		if q, err := h.host.Query(); err == nil {
			h.o.Checked(q, h.req, false)
		}
	}
	return true
}

// inForceNow reads back the setting in force: Windows' current period,
// Linux's cpu_dma_latency; nil when it cannot be read.
func inForceNow(host seam.Host) *timerinfo.Setting {
	q, err := host.Query()
	switch {
	case err != nil:
		return nil
	case q.Windows != nil:
		return &timerinfo.Setting{Resolution100ns: q.Windows.Current100ns, Simulated: q.Arch == "simulated"}
	case q.Linux != nil && q.Linux.CPUDMALatencyUs != nil:
		return &timerinfo.Setting{CPUDMALatencyUs: q.Linux.CPUDMALatencyUs}
	}
	return nil
}

// release withdraws the setting.
func (h *whileHold) release(now time.Time) {
	h.k.release()
	h.reapplies += h.k.reapplies
	h.rep.While.HeldNs += int64(now.Sub(h.heldSince))
	h.k = nil
}

// check is the periodic check of a held setting; with nothing held there
// is nothing to check.
func (h *whileHold) check(reason string) {
	if h.k != nil {
		h.k.check(reason)
	}
}

// done releases the setting if it is held, when the hold ends.
func (h *whileHold) done() {
	if h.k != nil {
		h.release(time.Now())
	}
}

// runningList is the watched processes running, by program and process
// id.
func (h *whileHold) runningList() []ProgramRunning {
	return timerstate.RunningList(h.running, h.programs)
}

func (h *whileHold) warn(msg string) {
	if h.o.Warn != nil {
		h.o.Warn(msg)
	}
}
