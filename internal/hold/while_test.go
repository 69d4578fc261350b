package hold_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/sim/simtest"

	"github.com/tickscope/tickscope/internal/hold"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// A hold with --while on the model and the fake OS, on fake tickers: the
// test starts and ends the fake processes, then ticks the scan.

// processes is the fake OS's process list, which the test changes.
type processes struct {
	mu   sync.Mutex
	list []sim.RunningProcess
}

func (p *processes) set(list ...sim.RunningProcess) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.list = list
}

func (p *processes) running() []sim.RunningProcess {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]sim.RunningProcess(nil), p.list...)
}

// failingHost is the model whose Apply fails while fail is set.
type failingHost struct {
	*sim.Host
	fail atomic.Bool
}

func (h *failingHost) Apply(s timerinfo.Setting) (timerinfo.Setting, func() error, error) {
	if h.fail.Load() {
		return timerinfo.Setting{}, nil, errors.New("STATUS_ACCESS_DENIED (test)")
	}
	return h.Host.Apply(s)
}

// whileRun is a hold with --while in progress.
type whileRun struct {
	t        *testing.T
	model    *sim.Host
	procs    *processes
	sys      *sim.System
	scan     chan time.Time
	recheck  chan time.Time
	changes  chan change
	warnings func() []string
	stop     func() *hold.HoldReport
	// advance is the virtual time the next scan lets pass first (tick).
	advance atomic.Int64
}

// change is one call of HoldOptions.Changed.
type change struct {
	state hold.WhileState
	event *hold.ProgramEvent
}

func startWhile(t *testing.T, host seam.Host, model *sim.Host, programs ...string) *whileRun {
	t.Helper()
	return startWhileOn(t, host, model, &sim.System{}, programs...)
}

// startWhileOn is startWhile on a fake OS of the test's, whose Running it
// sets.
func startWhileOn(t *testing.T, host seam.Host, model *sim.Host, sys *sim.System, programs ...string) *whileRun {
	t.Helper()
	return startWhileWith(t, host, model, sys, nil, programs...)
}

// startWhileWith is startWhileOn with the hold's options changed by with
// (nil: none).
func startWhileWith(t *testing.T, host seam.Host, model *sim.Host, sys *sim.System, with func(*hold.HoldOptions), programs ...string) *whileRun {
	t.Helper()
	r := &whileRun{t: t, model: model, procs: &processes{}, scan: make(chan time.Time), recheck: make(chan time.Time), changes: make(chan change, 16)}
	// Virtual time passes on the hold's goroutine, as its scan begins:
	// the scan none sent may still run (and take the setting) when the
	// test moves on.
	sys.Running = func() []sim.RunningProcess {
		if d := r.advance.Swap(0); d != 0 {
			r.model.Advance(time.Duration(d))
		}
		return r.procs.running()
	}
	r.sys = sys
	var mu sync.Mutex
	var warned []string
	r.warnings = func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), warned...) }
	q, err := host.Query()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	waiting := make(chan struct{})
	done := make(chan *hold.HoldReport)
	go func() {
		o := hold.HoldOptions{
			NoEsc: true, While: programs, RecheckEvery: 5 * time.Second, ScanEvery: time.Second,
			NewTicker: func(d time.Duration) (<-chan time.Time, func()) {
				if d == time.Second {
					return r.scan, func() {}
				}
				return r.recheck, func() {}
			},
			Warn:    func(msg string) { mu.Lock(); warned = append(warned, msg); mu.Unlock() },
			Holding: func(*hold.HoldReport) { t.Error("Holding called for a hold with --while") },
			Waiting: func(*hold.HoldReport) { close(waiting) },
			Changed: func(s hold.WhileState, e *hold.ProgramEvent) { r.changes <- change{s, e} },
		}
		if with != nil {
			with(&o)
		}
		rep, err := hold.Hold(ctx, host, r.sys, q, timerinfo.Setting{Resolution100ns: 10000}, o)
		if err != nil {
			t.Error(err)
		}
		done <- rep
	}()
	recv(t, waiting, "Waiting")
	r.stop = func() *hold.HoldReport { cancel(); return recv(t, done, "end of the hold") }
	return r
}

// tick lets d of virtual time pass and scans.
func (r *whileRun) tick(d time.Duration) {
	r.advance.Add(int64(d))
	send(r.t, r.scan, time.Time{}, "scan")
}

// next is the next change the hold reports.
func (r *whileRun) next() change {
	r.t.Helper()
	select {
	case c := <-r.changes:
		return c
	case <-time.After(10 * time.Second):
		r.t.Fatal("no change reported")
	}
	return change{}
}

// none checks that the last scan reported no change.
func (r *whileRun) none() {
	r.t.Helper()
	send(r.t, r.scan, time.Time{}, "scan") // the scan before has finished once this one is taken
	select {
	case c := <-r.changes:
		r.t.Fatalf("unexpected change %+v %+v", c.state, c.event)
	default:
	}
}

func (r *whileRun) period() uint32 { return r.model.Observe().Current100ns }

func game(pid int, name string) sim.RunningProcess {
	return sim.RunningProcess{PID: pid, Name: name, Path: `C:\Games\` + name}
}

func TestWhileHoldsOnlyWhileAProgramRuns(t *testing.T) {
	model, _ := sim.NewHost("game-session", 1)
	r := startWhile(t, model, model, "game.exe", `C:\Games\other.exe`)
	if p := r.period(); p != 156250 {
		t.Fatalf("waiting, the period is %d: something was held", p)
	}
	// A program not watched, and one of the same name elsewhere than the
	// path watched, hold nothing.
	r.procs.set(game(10, "launcher.exe"), sim.RunningProcess{PID: 11, Name: "other.exe", Path: `D:\other.exe`})
	r.none()
	if p := r.period(); p != 156250 {
		t.Fatalf("the period is %d with no watched program running", p)
	}
	started := time.Now().Add(-300 * time.Millisecond)
	first := game(4242, "GAME.EXE")
	first.Started = started
	r.procs.set(game(10, "launcher.exe"), first)
	r.tick(time.Second)
	c := r.next()
	e := c.event
	if e.Event != hold.EventStarted || e.PID != 4242 || e.Program != "game.exe" || e.Setting != hold.SettingHeld || !c.state.Holding {
		t.Fatalf("the first start: %+v, state %+v", e, c.state)
	}
	if e.NoticedAfterNs == nil || *e.NoticedAfterNs < int64(300*time.Millisecond) || *e.NoticedAfterNs > int64(10*time.Second) {
		t.Errorf("noticed after %v, want about 300 ms", e.NoticedAfterNs)
	}
	if e.Granted == nil || e.Granted.Resolution100ns != 9998 || e.InForce == nil || e.InForce.Resolution100ns != 9998 || e.Check == nil {
		t.Errorf("the take: granted %v, in force %v, check %v", e.Granted, e.InForce, e.Check)
	}
	if p := r.period(); p != 9998 {
		t.Fatalf("holding, the period is %d", p)
	}
	// The second program runs too; the first exits: still held.
	r.procs.set(first, game(4318, "other.exe"))
	r.tick(time.Second)
	if c := r.next(); c.event.Event != hold.EventStarted || c.event.PID != 4318 || c.event.Program != `C:\Games\other.exe` || c.event.Setting != "" || len(c.state.Running) != 2 {
		t.Errorf("the second start: %+v, state %+v", c.event, c.state)
	}
	r.procs.set(game(4318, "other.exe"))
	r.tick(time.Second)
	if c := r.next(); c.event.Event != hold.EventExited || c.event.PID != 4242 || c.event.Setting != "" || !c.state.Holding {
		t.Errorf("the first exit: %+v, state %+v", c.event, c.state)
	}
	if p := r.period(); p != 9998 {
		t.Fatalf("one program still runs, the period is %d", p)
	}
	// The last exits: released, read back.
	r.procs.set()
	r.tick(time.Second)
	c = r.next()
	if c.event.Event != hold.EventExited || c.event.PID != 4318 || c.event.Setting != hold.SettingReleased || c.state.Holding ||
		c.event.InForce == nil || c.event.InForce.Resolution100ns != 156250 {
		t.Errorf("the last exit: %+v, state %+v", c.event, c.state)
	}
	if p := r.period(); p != 156250 {
		t.Fatalf("released, the period is %d", p)
	}
	// Again: a second hold.
	r.procs.set(game(5000, "game.exe"))
	r.tick(time.Second)
	if c := r.next(); c.event.Setting != hold.SettingHeld || c.event.Check != nil {
		t.Errorf("the second take: %+v (the check is the first take's only)", c.event)
	}
	rep := r.stop()
	if p := r.period(); p != 156250 {
		t.Errorf("after the hold ended while holding, the period is %d", p)
	}
	w := rep.While
	if w.Holds != 2 || len(w.Events) != 5 || rep.EndedBy != "signal" || rep.Check == nil || rep.Granted.Resolution100ns != 9998 {
		t.Errorf("report: %d holds, %d events, ended by %s, check %v, granted %v", w.Holds, len(w.Events), rep.EndedBy, rep.Check, rep.Granted)
	}
	if len(w.Running) != 1 || w.Running[0] != (hold.ProgramRunning{Program: "game.exe", PID: 5000}) {
		t.Errorf("running at the end: %+v", w.Running)
	}
	if len(r.warnings()) != 0 {
		t.Errorf("warnings %q", r.warnings())
	}
}

// A process id that now runs another watched program is an exit and a
// start; in one scan the setting stays held.
func TestWhileSeesAReusedProcessID(t *testing.T) {
	model, _ := sim.NewHost("game-session", 1)
	r := startWhile(t, model, model, "game.exe", "other.exe")
	r.procs.set(game(7, "game.exe"))
	r.tick(time.Second)
	r.next()
	r.procs.set(game(7, "other.exe"))
	r.tick(time.Second)
	if c := r.next(); c.event.Event != hold.EventExited || c.event.Program != "game.exe" || c.event.Setting != "" {
		t.Errorf("%+v", c.event)
	}
	if c := r.next(); c.event.Event != hold.EventStarted || c.event.Program != "other.exe" || c.event.Setting != "" || !c.state.Holding {
		t.Errorf("%+v", c.event)
	}
	if rep := r.stop(); rep.While.Holds != 1 {
		t.Errorf("%d holds, want 1", rep.While.Holds)
	}
}

// A take that fails is said once and tried at each scan while the program
// runs; a scan that fails is said once.
func TestWhileRetriesAFailedTake(t *testing.T) {
	model, _ := sim.NewHost("game-session", 1)
	host := &failingHost{Host: model}
	host.fail.Store(true)
	r := startWhile(t, host, model, "game.exe")
	r.procs.set(game(1, "game.exe"))
	r.tick(time.Second)
	if c := r.next(); c.event.Setting != hold.SettingFailed || !strings.Contains(c.event.Error, "STATUS_ACCESS_DENIED") || c.state.Holding {
		t.Errorf("a failed take: %+v, %+v", c.event, c.state)
	}
	r.none()
	r.none()
	host.fail.Store(false)
	r.tick(time.Second)
	if c := r.next(); c.event == nil || c.event.Event != hold.EventRetried || c.event.PID != 1 || c.event.Setting != hold.SettingHeld ||
		c.event.Granted == nil || c.event.Granted.Resolution100ns != 9998 || c.event.Check == nil || !c.state.Holding {
		t.Errorf("a take that succeeds later: %+v, %+v", c.event, c.state)
	}
	if p := r.period(); p != 9998 {
		t.Errorf("the period is %d", p)
	}
	r.sys.SetScanErr(errors.New("snapshot failed (test)"))
	r.none()
	r.none()
	rep := r.stop()
	w := r.warnings()
	if len(w) != 3 || !strings.Contains(w[0], "holding 1.0000 ms (10000 x 100ns) for game.exe (pid 1) failed: STATUS_ACCESS_DENIED (test); tried again every 1s while it runs") ||
		!strings.Contains(w[1], "holding 1.0000 ms (10000 x 100ns) for game.exe (pid 1) now") ||
		!strings.Contains(w[2], "looking for game.exe: snapshot failed (test); looking again every 1s") {
		t.Errorf("warnings %q", w)
	}
	if rep.While.Holds != 1 || len(rep.While.Events) != 2 || rep.While.Events[1].Event != hold.EventRetried || rep.Granted.Resolution100ns != 9998 {
		t.Errorf("%d holds, granted %v, events %+v", rep.While.Holds, rep.Granted, rep.While.Events)
	}
	// The report's warnings are what was warned of.
	if fmt.Sprint(rep.Warnings) != fmt.Sprint(w) {
		t.Errorf("the report's warnings %q, warned %q", rep.Warnings, w)
	}
}

// A take that fails again with the same error after the programs had all
// exited is marked on its event and warned of again: the "nothing held"
// of a start without a setting means another program held it.
func TestWhileSaysAFailedTakeAfterAnExit(t *testing.T) {
	model, _ := sim.NewHost("game-session", 1)
	host := &failingHost{Host: model}
	host.fail.Store(true)
	r := startWhile(t, host, model, "game.exe")
	r.procs.set(game(1, "game.exe"))
	r.tick(time.Second)
	if c := r.next(); c.event.Setting != hold.SettingFailed {
		t.Fatalf("the first take: %+v", c.event)
	}
	r.procs.set()
	r.tick(time.Second)
	if c := r.next(); c.event.Event != hold.EventExited || c.event.Setting != "" {
		t.Fatalf("the exit: %+v", c.event)
	}
	r.procs.set(game(2, "game.exe"))
	r.tick(time.Second)
	if c := r.next(); c.event.Event != hold.EventStarted || c.event.Setting != hold.SettingFailed || !strings.Contains(c.event.Error, "STATUS_ACCESS_DENIED") {
		t.Errorf("the second start's take: %+v", c.event)
	}
	// Another start while the take still fails with that error: marked,
	// not warned of again.
	r.procs.set(game(2, "game.exe"), game(3, "game.exe"))
	r.tick(time.Second)
	if c := r.next(); c.event.PID != 3 || c.event.Setting != hold.SettingFailed {
		t.Errorf("the third start's take: %+v", c.event)
	}
	rep := r.stop()
	w := r.warnings()
	if len(w) != 2 || !strings.Contains(w[0], "for game.exe (pid 1) failed") || !strings.Contains(w[1], "for game.exe (pid 2) failed") {
		t.Errorf("warnings %q", w)
	}
	if len(rep.Warnings) != 2 {
		t.Errorf("the report's warnings %q", rep.Warnings)
	}
}

// The periodic check runs only while the setting is held, and re-applies
// a request the OS dropped.
func TestWhileChecksOnlyWhileHolding(t *testing.T) {
	model, _ := sim.NewHost("dropped-request", 1)
	r := startWhile(t, model, model, "game.exe")
	send(r.t, r.recheck, time.Time{}, "recheck")
	r.procs.set(game(1, "game.exe"))
	r.tick(time.Second)
	r.next()
	model.Advance(61 * time.Second)
	send(r.t, r.recheck, time.Time{}, "recheck")
	r.none()
	if p := r.period(); p != 9998 {
		t.Errorf("after the OS dropped the request and a check, the period is %d", p)
	}
	rep := r.stop()
	if rep.Reapplies != 1 || len(r.warnings()) != 1 || !strings.Contains(r.warnings()[0], "was lost") {
		t.Errorf("re-applies %d, warnings %q", rep.Reapplies, r.warnings())
	}
}

// The report keeps the last events of a long run.
func TestWhileBoundsItsEvents(t *testing.T) {
	model, _ := sim.NewHost("game-session", 1)
	r := startWhile(t, model, model, "game.exe")
	for i := range 600 {
		r.procs.set(game(100+i, "game.exe"))
		r.tick(time.Second)
		r.next()
		r.procs.set()
		r.tick(time.Second)
		r.next()
	}
	rep := r.stop()
	w := rep.While
	if len(w.Events) != 1000 || w.EventsDropped != 200 || w.Holds != 600 || w.Events[999].PID != 699 || w.Events[0].PID != 200 {
		t.Errorf("%d events kept, %d dropped, %d holds, last %+v", len(w.Events), w.EventsDropped, w.Holds, w.Events[len(w.Events)-1])
	}
}

func TestWhileWarnsWhereRequestsArePerProcess(t *testing.T) {
	model, _ := sim.NewHost("knee-26100", 1)
	var warnings []string
	rep, err := hold.Hold(context.Background(), model, &sim.System{}, simtest.Query(t, model), timerinfo.Setting{Resolution100ns: 10000}, hold.HoldOptions{
		NoEsc: true, For: time.Millisecond, While: []string{"game.exe"},
		Waiting: func(rep *hold.HoldReport) { warnings = rep.Warnings },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "requests are per-process here (per-process") || !strings.Contains(warnings[0], "so the period held while game.exe runs reaches tickscope only, not the program") {
		t.Errorf("warnings %q", warnings)
	}
	if rep.While.Holds != 0 || rep.EndedBy != "for" {
		t.Errorf("%+v", rep)
	}
}

func TestPlanApplyWhile(t *testing.T) {
	win := simtest.Query(t, simtest.NewWindows(t, "knee-26100"))
	lin := simtest.LinuxReport(timerinfo.DMALatencyDefaultUs)
	plan, err := hold.PlanApply(win, hold.ApplyFlags{MS: 1, MSSet: true, Persist: true, While: `game.exe,C:\Games\other.exe`, WhileSet: true})
	if err != nil || strings.Join(plan.HolderArgs, " ") != `holder --resolution 10000 --no-console --no-esc --while game.exe,C:\Games\other.exe` ||
		len(plan.While) != 2 {
		t.Errorf("Windows --persist --while: %+v, %v", plan, err)
	}
	plan, err = hold.PlanApply(lin, hold.ApplyFlags{DMALatencySet: true, Persist: true, While: "game", WhileSet: true})
	if err != nil || strings.Join(plan.HolderArgs, " ") != "holder --dma-latency 0 --no-esc --while game" {
		t.Errorf("Linux --persist --while: %+v, %v", plan, err)
	}
	for _, tt := range []struct {
		name string
		q    *timerinfo.Report
		f    hold.ApplyFlags
		want string
	}{
		{"slack", lin, hold.ApplyFlags{PID: 1, PIDSet: true, SlackSet: true, While: "game", WhileSet: true}, "--while and --pid/--slack: a process's timer slack is its own"},
		{"slack alone", lin, hold.ApplyFlags{SlackSet: true, While: "game", WhileSet: true}, "tickscope run --slack D -- PROGRAM"},
		{"empty element", lin, hold.ApplyFlags{DMALatencySet: true, While: "game,", WhileSet: true}, "--while game,: program 2 of 2 is empty"},
		{"twice", win, hold.ApplyFlags{MS: 1, MSSet: true, While: "Game.exe,game.exe", WhileSet: true}, "name the same program"},
		{"relative", lin, hold.ApplyFlags{DMALatencySet: true, While: "bin/game", WhileSet: true}, "is a relative path"},
		{"empty list", lin, hold.ApplyFlags{DMALatencySet: true, While: "", WhileSet: true}, `--while "": an empty list`},
		{"empty list on Windows, with persist", win, hold.ApplyFlags{MS: 1, MSSet: true, Persist: true, While: " ", WhileSet: true}, `--while " ": an empty list`},
		{"a lone comma", win, hold.ApplyFlags{MS: 1, MSSet: true, While: ",", WhileSet: true}, "--while ,: program 1 of 2 is empty"},
		{"a name given twice on Linux", lin, hold.ApplyFlags{DMALatencySet: true, Persist: true, While: "game,steam,game", WhileSet: true}, "--while game,steam,game: game is given twice"},
		{"a name and its .exe on Windows", win, hold.ApplyFlags{MS: 1, MSSet: true, Persist: true, While: "game,GAME.exe", WhileSet: true}, "game and GAME.exe name the same program"},
		{"a path and its other slashes on Windows", win, hold.ApplyFlags{MS: 1, MSSet: true, While: `C:\Games\game.exe,c:/games/GAME.EXE`, WhileSet: true}, "name the same program"},
		{"a directory", lin, hold.ApplyFlags{DMALatencySet: true, While: "/opt/game/", WhileSet: true}, "ends with a separator: a directory, not a program"},
		{"a directory on Windows", win, hold.ApplyFlags{MS: 1, MSSet: true, Persist: true, While: `C:\Games\`, WhileSet: true}, "ends with a separator: a directory, not a program"},
		{"dot dot", lin, hold.ApplyFlags{DMALatencySet: true, While: "/opt/../game", WhileSet: true}, "holds . or .."},
		{"a character Windows forbids", win, hold.ApplyFlags{MS: 1, MSSet: true, While: "ga|me.exe", WhileSet: true}, "holds a character Windows does not allow in a file name"},
		{"a drive-relative path", win, hold.ApplyFlags{MS: 1, MSSet: true, While: `\game.exe`, WhileSet: true}, "is a relative path"},
		{"a control character", lin, hold.ApplyFlags{DMALatencySet: true, While: "ga\x1bme", WhileSet: true}, "holds a control character"},
		{"too long a name", lin, hold.ApplyFlags{DMALatencySet: true, While: strings.Repeat("g", 256), WhileSet: true}, "is longer than a file name can be"},
		{"simulated persist", win, hold.ApplyFlags{MS: 1, MSSet: true, While: "game.exe", WhileSet: true, Simulated: true, Persist: true}, "--simulate holds on the model"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := hold.PlanApply(tt.q, tt.f)
			if plan != nil || !isUsage(err) {
				t.Fatalf("PlanApply = %+v, %v; want a usage error", plan, err)
			}
			wantError(t, err, tt.want)
		})
	}
}

// A take with --while reads back its grant as a hold without does: a
// grant finer than requested is warned of and kept in the report's
// warnings, as Hold keeps it.
func TestWhileWarnsOfAFinerGrantAsHoldDoes(t *testing.T) {
	model, _ := sim.NewHost("contaminated", 1) // another process holds 0.5 ms
	r := startWhile(t, model, model, "game.exe")
	r.procs.set(game(1, "game.exe"))
	r.tick(time.Second)
	if c := r.next(); c.event.Setting != hold.SettingHeld || c.event.Granted.Resolution100ns != 5000 {
		t.Fatalf("the take: %+v", c.event)
	}
	rep := r.stop()
	// The first is the warning of per-process requests, said when the
	// hold began to wait.
	const finer = "granted 0.5000 ms, finer than requested: another process holds a finer period"
	if len(rep.Warnings) != 2 || rep.Warnings[1] != finer {
		t.Errorf("the report's warnings %q", rep.Warnings)
	}
	if w := r.warnings(); len(w) != 1 || w[0] != finer {
		t.Errorf("warned %q", w)
	}
}

// The fake OS follows Linux's rules when asked: a hold watches comm (15
// bytes) and the executable a link leads to, as the /proc scanner does.
func TestWhileFollowsLinuxRules(t *testing.T) {
	model, _ := sim.NewHost("game-session", 1)
	r := startWhileOn(t, model, model, &sim.System{LinuxPrograms: true, Links: map[string]string{"/x/game": "/x/game-bin"}},
		"/x/game", "tickscope-while-test")
	// Started by the link's target: its comm and executable are the
	// target's.
	r.procs.set(sim.RunningProcess{PID: 10, Name: "game-bin", Path: "/x/game-bin"})
	r.tick(time.Second)
	if c := r.next(); c.event.PID != 10 || c.event.Program != "/x/game" || c.event.Setting != hold.SettingHeld {
		t.Errorf("the link's target: %+v", c.event)
	}
	// A name longer than comm holds: its comm is cut, its executable
	// tells; another program whose comm reads the same is not it; names
	// compare with case.
	r.procs.set(sim.RunningProcess{PID: 10, Name: "game-bin", Path: "/x/game-bin"},
		sim.RunningProcess{PID: 11, Name: "tickscope-while", Path: "/opt/tickscope-while-test"},
		sim.RunningProcess{PID: 12, Name: "tickscope-while", Path: "/opt/tickscope-while-other"},
		sim.RunningProcess{PID: 13, Name: "GAME-BIN", Path: "/x/GAME-BIN"})
	r.tick(time.Second)
	if c := r.next(); c.event.PID != 11 || c.event.Program != "tickscope-while-test" {
		t.Errorf("the long name: %+v", c.event)
	}
	r.none()
	if rep := r.stop(); len(rep.While.Running) != 2 {
		t.Errorf("running at the end: %+v", rep.While.Running)
	}
}

// On Windows a name without .exe is the program with it; a process whose
// image name is a path-named program's but whose path cannot be read is
// not counted, and said once.
func TestWhileWindowsNamesAndUnreadablePaths(t *testing.T) {
	model, _ := sim.NewHost("game-session", 1)
	r := startWhile(t, model, model, "game", `C:\Games\other.exe`)
	r.procs.set(sim.RunningProcess{PID: 20, Name: "other.exe", PathErr: errors.New("Access is denied (test)")})
	r.none()
	r.none()
	r.procs.set(sim.RunningProcess{PID: 20, Name: "other.exe", PathErr: errors.New("Access is denied (test)")}, game(21, "GAME.EXE"))
	r.tick(time.Second)
	if c := r.next(); c.event.PID != 21 || c.event.Program != "game" || c.event.Setting != hold.SettingHeld {
		t.Errorf("game without .exe: %+v", c.event)
	}
	rep := r.stop()
	if w := r.warnings(); len(w) != 1 || w[0] != `process 20 may be C:\Games\other.exe, but its executable's path could not be read (Access is denied (test)): it is not counted as C:\Games\other.exe while it runs` {
		t.Errorf("warnings %q", w)
	}
	if len(rep.Warnings) != 1 {
		t.Errorf("the report's warnings %q", rep.Warnings)
	}
}

// --while-user: a process of the program that another user started is
// not counted (any user may name a process game); the user's own is.
func TestWhileCountsOnlyTheUsersProcesses(t *testing.T) {
	model, _ := sim.NewHost("game-session", 1)
	r := startWhileWith(t, model, model, &sim.System{LinuxPrograms: true},
		func(o *hold.HoldOptions) { o.WhileUser = &hold.ProgramUser{Name: "alice", UID: 1000} }, "game")
	r.procs.set(sim.RunningProcess{PID: 30, Name: "game", Path: "/home/mallory/game", UID: 65534})
	r.none()
	if p := r.period(); p != 156250 {
		t.Fatalf("another user's game holds the period at %d", p)
	}
	r.procs.set(sim.RunningProcess{PID: 30, Name: "game", Path: "/home/mallory/game", UID: 65534},
		sim.RunningProcess{PID: 31, Name: "game", Path: "/usr/games/game", UID: 1000})
	r.tick(time.Second)
	if c := r.next(); c.event.PID != 31 || c.event.Setting != hold.SettingHeld || len(c.state.Running) != 1 {
		t.Errorf("the user's game: %+v, state %+v", c.event, c.state)
	}
	rep := r.stop()
	if w := rep.While; w.User != "alice" || w.UID == nil || *w.UID != 1000 {
		t.Errorf("the report's user: %q, %v", w.User, w.UID)
	}
}

// --while-user is checked: it narrows --while, and names a user.
func TestPlanApplyWhileUser(t *testing.T) {
	lin := simtest.LinuxReport(timerinfo.DMALatencyDefaultUs)
	plan, err := hold.PlanApply(lin, hold.ApplyFlags{DMALatencySet: true, Persist: true, While: "game", WhileSet: true, WhileUser: "root", WhileUserSet: true})
	if err != nil || plan.WhileUser == nil || plan.WhileUser.UID != 0 ||
		strings.Join(plan.HolderArgs, " ") != "holder --dma-latency 0 --no-esc --while game --while-user 0" {
		t.Errorf("--while-user root: %+v, %v; want the startup holder given the user id, not the name", plan, err)
	}
	plan, err = hold.PlanApply(lin, hold.ApplyFlags{DMALatencySet: true, While: "game", WhileSet: true, WhileUser: "1000", WhileUserSet: true})
	if err != nil || plan.WhileUser == nil || plan.WhileUser.UID != 1000 {
		t.Errorf("--while-user 1000: %+v, %v", plan, err)
	}
	// Any uid_t but (uid_t)-1 is a user id, those above 2^31 too.
	plan, err = hold.PlanApply(lin, hold.ApplyFlags{DMALatencySet: true, Persist: true, While: "game", WhileSet: true, WhileUser: "4294967294", WhileUserSet: true})
	if err != nil || plan.WhileUser == nil || strconv.Itoa(plan.WhileUser.UID) != "4294967294" ||
		!strings.HasSuffix(strings.Join(plan.HolderArgs, " "), " --while-user 4294967294") {
		t.Errorf("--while-user 4294967294: %+v, %v", plan, err)
	}
	for _, tt := range []struct {
		name string
		f    hold.ApplyFlags
		want string
	}{
		{"without --while", hold.ApplyFlags{DMALatencySet: true, WhileUser: "root", WhileUserSet: true}, "--while-user root: narrows --while: give --while PROGRAM[,PROGRAM...] too"},
		{"no such user", hold.ApplyFlags{DMALatencySet: true, While: "game", WhileSet: true, WhileUser: "tickscope-no-such-user", WhileUserSet: true}, "--while-user tickscope-no-such-user: no such user here"},
		{"a negative id", hold.ApplyFlags{DMALatencySet: true, While: "game", WhileSet: true, WhileUser: "-1", WhileUserSet: true}, "--while-user -1: no such user here"},
		{"(uid_t)-1", hold.ApplyFlags{DMALatencySet: true, While: "game", WhileSet: true, WhileUser: "4294967295", WhileUserSet: true}, "--while-user 4294967295: no such user here"},
		{"beyond uid_t", hold.ApplyFlags{DMALatencySet: true, While: "game", WhileSet: true, WhileUser: "4294967296", WhileUserSet: true}, "--while-user 4294967296: no such user here"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := hold.PlanApply(lin, tt.f)
			if plan != nil || !isUsage(err) {
				t.Fatalf("PlanApply = %+v, %v; want a usage error", plan, err)
			}
			wantError(t, err, tt.want)
		})
	}
}

// --while-user on Windows: a process of the program whose token is
// another user's is not counted, nor one whose user could not be read;
// the user's own is, and the report names the user's SID.
func TestWhileCountsOnlyTheWindowsUsersProcesses(t *testing.T) {
	const alice, mallory = "S-1-5-21-1-2-3-1001", "S-1-5-21-1-2-3-1002"
	model, _ := sim.NewHost("game-session", 1)
	r := startWhileWith(t, model, model, &sim.System{},
		func(o *hold.HoldOptions) { o.WhileUser = &hold.ProgramUser{Name: "alice", UID: -1, SID: alice} }, "game.exe")
	r.procs.set(sim.RunningProcess{PID: 30, Name: "game.exe", SID: mallory}, sim.RunningProcess{PID: 32, Name: "game.exe"})
	r.none()
	if p := r.period(); p != 156250 {
		t.Fatalf("another user's game holds the period at %d", p)
	}
	r.procs.set(sim.RunningProcess{PID: 30, Name: "game.exe", SID: mallory}, sim.RunningProcess{PID: 32, Name: "game.exe"},
		sim.RunningProcess{PID: 31, Name: "GAME.EXE", SID: strings.ToLower(alice)})
	r.tick(time.Second)
	if c := r.next(); c.event.PID != 31 || c.event.Setting != hold.SettingHeld || len(c.state.Running) != 1 {
		t.Errorf("the user's game: %+v, state %+v", c.event, c.state)
	}
	rep := r.stop()
	if w := rep.While; w.User != "alice" || w.SID != alice || w.UID != nil {
		t.Errorf("the report's user: %q, SID %q, UID %v; want alice, %s, none", w.User, w.SID, w.UID, alice)
	}
}

// --while-user on Windows names an account (LookupAccountNameW, faked
// here) or a SID, and the startup holder is given the SID.
func TestPlanApplyWindowsWhileUser(t *testing.T) {
	const sid = "S-1-5-21-1-2-3-1001"
	defer hold.SetLookupAccount(func(value string) (string, string, error) {
		switch value {
		case "alice", `HOST\alice`, sid:
			return sid, "", nil
		case "Administrators":
			return "", "names a group, not a user: give a user's name or a SID (S-1-5-21-...)", nil
		case "offline":
			return "", "", errors.New("the trust relationship failed (test)")
		}
		return "", hold.NoSuchAccount, nil
	})()
	win := simtest.Query(t, simtest.NewWindows(t, "knee-26100"))
	plan, err := hold.PlanApply(win, hold.ApplyFlags{MS: 1, MSSet: true, Persist: true, While: "game.exe", WhileSet: true, WhileUser: "alice", WhileUserSet: true})
	if err != nil || plan.WhileUser == nil || plan.WhileUser.SID != sid || plan.WhileUser.UID != -1 ||
		strings.Join(plan.HolderArgs, " ") != "holder --resolution 10000 --no-console --no-esc --while game.exe --while-user "+sid {
		t.Errorf("--while-user alice: %+v, %v; want the startup holder given the SID", plan, err)
	}
	for _, tt := range []struct {
		name, user, want string
		usage            bool
	}{
		{"no such user", "tickscope-no-such-user", `--while-user tickscope-no-such-user: no such user here; give a user's name (alice, DOMAIN\alice) or a SID (S-1-5-21-...)`, true},
		{"a group", "Administrators", "--while-user Administrators: names a group, not a user", true},
		{"a failed lookup", "offline", "--while-user offline: looking the account up: the trust relationship failed (test)", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := hold.PlanApply(win, hold.ApplyFlags{MS: 1, MSSet: true, While: "game.exe", WhileSet: true, WhileUser: tt.user, WhileUserSet: true})
			if plan != nil || err == nil || isUsage(err) != tt.usage {
				t.Fatalf("PlanApply = %+v, %v; want an error, a usage error: %v", plan, err, tt.usage)
			}
			wantError(t, err, tt.want)
		})
	}
}
