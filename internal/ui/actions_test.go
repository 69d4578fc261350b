package ui

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/global"
	"github.com/tickscope/tickscope/internal/hold"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/startup"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// until waits, up to 30 s, for done to hold: what it waits on has no
// event to wait for but the state the page reads.
func until(t *testing.T, what string, done func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !done(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not after 30 s: %s", what)
		}
	}
}

// waitJob waits for the page's job id to finish and returns its outcome.
func waitJob(t *testing.T, s *Server, id int) *Outcome {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resp := request(t, s, "GET", "/"+s.token+"/result?job="+strconv.Itoa(id), s.addr, "", "", "")
		if resp.StatusCode == http.StatusConflict {
			continue
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("result of job %d: %d", id, resp.StatusCode)
		}
		var out Outcome
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return &out
	}
	t.Fatalf("job %d still runs after 60 s", id)
	return nil
}

func TestMeasureOnTheModel(t *testing.T) {
	s, _ := newTestServer(t, "narrow-band")
	started := post(t, s, "measure", `{"samples":20}`)
	if started.Error != "" || started.Job != 1 || started.Command != "tickscope measure --samples 20 --simulate narrow-band" {
		t.Fatalf("measure started %+v", started)
	}
	out := waitJob(t, s, started.Job)
	if out.Error != "" || !strings.Contains(out.Text, "SIMULATED  tickscope measure: sleep, 1 ms delay, 20 samples") || !strings.Contains(out.Chart, `<svg class="chart"`) {
		t.Errorf("measure's outcome: %+v", out)
	}
	// A value the command line would split is shown quoted.
	if out := post(t, s, "measure", `{"method":"a b","samples":5}`); out.Error == "" || out.Command != `tickscope measure --method "a b" --samples 5 --simulate narrow-band` {
		t.Errorf("measure --method \"a b\": %+v", out)
	}
	// The command's own refusal, word for word.
	bad := post(t, s, "measure", `{"samples":0}`)
	if !strings.HasPrefix(bad.Error, "--samples 0: allowed 1..") {
		t.Errorf("samples 0: %q", bad.Error)
	}
}

func TestHoldAndRelease(t *testing.T) {
	s, _ := newTestServer(t, "narrow-band")
	out := post(t, s, "hold", `{"resolution":"5118"}`)
	if out.Error != "" || out.Command != "tickscope apply --resolution 5118"+modelOnly || !strings.Contains(out.Text, "holding until Release is pressed") {
		t.Fatalf("hold: %+v", out)
	}
	for _, line := range strings.SplitAfter(strings.TrimSuffix(out.Text, "\n"), "\n") {
		if !strings.HasPrefix(line, "SIMULATED  ") {
			t.Errorf("hold's text on the model has the line %q without SIMULATED", line)
		}
	}
	st := s.state()
	if st.Held == nil || !strings.HasPrefix(st.Held.Setting, "0.5118 ms") || st.Windows.Current100ns == 156250 {
		t.Errorf("while held the state shows %+v and the period %d", st.Held, st.Windows.Current100ns)
	}
	if again := post(t, s, "hold", `{"resolution":"6000"}`); !strings.Contains(again.Error, "already holds") {
		t.Errorf("a second hold: %+v", again)
	}
	out = post(t, s, "release", `{}`)
	if out.Error != "" || !strings.HasPrefix(out.Text, "SIMULATED  ") || !strings.Contains(out.Text, "released after") || !strings.Contains(out.Text, "released in tickscope ui") {
		t.Errorf("release: %+v", out)
	}
	if out.Warnings == nil {
		t.Error(`release answers "warnings": null`)
	}
	if st := s.state(); st.Held != nil || st.Windows.Current100ns != 156250 {
		t.Errorf("after release the state shows %+v and the period %d", st.Held, st.Windows.Current100ns)
	}
	// apply's refusals, word for word.
	q, _ := s.host.Query()
	_, want := hold.PlanApply(q, hold.ApplyFlags{Resolution: 1, ResolutionSet: true})
	if got := post(t, s, "hold", `{"resolution":"1"}`); want == nil || got.Error != want.Error() {
		t.Errorf("hold --resolution 1: %q, want %q", got.Error, want)
	}
	_, want = hold.PlanApply(q, hold.ApplyFlags{})
	if got := post(t, s, "hold", `{}`); want == nil || got.Error != want.Error() {
		t.Errorf("hold with no setting: %q, want %q", got.Error, want)
	}
}

// TestHoldInMilliseconds: the Hold form's period in ms is held as apply
// --ms holds it, and its command line is the one a user would type again,
// in the OS's 100 ns units; a value apply refuses is refused in --ms's
// words, as typed.
func TestHoldInMilliseconds(t *testing.T) {
	s, _ := newTestServer(t, "narrow-band")
	out := post(t, s, "hold", `{"ms":"0.5118"}`)
	if out.Error != "" || out.Command != "tickscope apply --resolution 5118"+modelOnly {
		t.Fatalf("hold 0.5118 ms: %+v", out)
	}
	if st := s.state(); st.Held == nil || !strings.HasPrefix(st.Held.Setting, "0.5118 ms") || st.Held.Command != out.Command {
		t.Errorf("while held the state shows %+v", st.Held)
	}
	post(t, s, "release", `{}`)
	q, _ := s.host.Query()
	_, want := hold.PlanApply(q, hold.ApplyFlags{MS: 0.01, MSSet: true})
	if got := post(t, s, "hold", `{"ms":"0.01"}`); want == nil || got.Error != want.Error() || got.Command != "tickscope apply --ms 0.01"+modelOnly {
		t.Errorf("hold 0.01 ms: %+v, want the error %q", got, want)
	}
	if got := post(t, s, "persist", `{"ms":"0.5118"}`); got.Command != "tickscope apply --resolution 5118 --persist"+modelOnly {
		t.Errorf("persist 0.5118 ms: %+v", got)
	}
}

// TestGlobalNeedsElevation: the refusal is global's sentence, and the
// page offers to run it elevated; on the model that runs nothing.
func TestGlobalNeedsElevation(t *testing.T) {
	s, _ := newTestServer(t, "narrow-band")
	out := post(t, s, "global", `{"on":true}`)
	if out.Error != global.ErrGlobalNeedsElevation.Error() || out.Elevate != "tickscope global on" {
		t.Errorf("global on, not elevated: %+v", out)
	}
	out = post(t, s, "elevate", `{"on":true}`)
	if !strings.HasPrefix(out.Error, "SIMULATED") {
		t.Errorf("elevate on the model: %+v", out)
	}
	if _, elevated := s.o.Shell.(*sim.Shell).Calls(); len(elevated) != 0 {
		t.Errorf("the model ran %v elevated", elevated)
	}
}

// TestElevateRunsGlobal: on a machine, Elevate runs this tickscope's
// global on|off through the shell's consent prompt.
func TestElevateRunsGlobal(t *testing.T) {
	shell := &sim.Shell{}
	s, err := New(Options{Host: mustModel(t), System: &sim.System{Exe: `C:\t\tickscope.exe`}, Shell: shell}, "127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := s.elevate(false)
	_, elevated := shell.Calls()
	if out.Error != "" || len(elevated) != 1 || strings.Join(elevated[0], " ") != `C:\t\tickscope.exe global off` {
		t.Errorf("elevate: %+v, ran %q", out, elevated)
	}
	shell.ExitCode = 1
	if out := s.elevate(true); !strings.Contains(out.Error, "exited with code 1") {
		t.Errorf("a failed elevated run: %+v", out)
	}
}

// TestPersistRefusedOnThePerProcessModel: --persist's refusal, word for
// word, and nothing installed.
func TestPersistRefusedOnThePerProcessModel(t *testing.T) {
	s, _ := newTestServer(t, "narrow-band")
	out := post(t, s, "persist", `{"resolution":"5118"}`)
	q, _ := s.host.Query()
	_, want := startup.Persist(s.host, s.o.System, q, timerinfo.Setting{Resolution100ns: 5118}, []string{"apply"}, startup.PersistOptions{})
	if want == nil || out.Error != want.Error() || out.Command != "tickscope apply --resolution 5118 --persist"+modelOnly {
		t.Errorf("persist: %+v, want the error %v", out, want)
	}
	if installed := s.o.System.(*sim.System).StartupMechanism.Installs; installed != 0 {
		t.Errorf("%d installs", installed)
	}
	if out := post(t, s, "remove", `{}`); out.Error != "" || !strings.Contains(out.Text, "nothing to remove") {
		t.Errorf("remove: %+v", out)
	}
}

// TestBenchOnTheModel: the bench runs paced to the model's clock, its
// progress shows while it runs, Stop ends it with a result for what was
// measured, and a whole run ends with the recommendation, the chart, and
// the recommendation offered to Hold.
func TestBenchOnTheModel(t *testing.T) {
	s, _ := newTestServer(t, "narrow-band")
	started := post(t, s, "bench", `{"samples":40}`)
	if started.Error != "" || started.Command != "tickscope bench --samples 40 --simulate narrow-band" {
		t.Fatalf("bench: %+v", started)
	}
	if again := post(t, s, "measure", `{"samples":5}`); again.Error != "a bench is running: wait for it, or press Stop" {
		t.Errorf("a second job: %+v", again)
	}
	seen := false
	for deadline := time.Now().Add(30 * time.Second); !seen && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if j := s.state().Job; j != nil && j.Running && j.Done > 0 && j.Done < j.Total {
			seen = true
		}
	}
	if !seen {
		t.Error("no progress seen while the bench ran")
	}
	out := waitJob(t, s, started.Job)
	if out.Error != "" || !strings.Contains(out.Text, "SIMULATED    recommend        0.51") || !strings.Contains(out.Chart, `<svg class="chart"`) {
		t.Fatalf("bench's outcome: %s %s", out.Error, out.Text)
	}
	if h := s.state().Hold; h.Flag != "ms" || !strings.HasPrefix(h.Value, "0.51") || h.From != "the bench's recommendation" || !h.FromBench {
		t.Errorf("the Hold form offers %+v", h)
	}

	// Stopped early, once it has measured something, it says so and
	// recommends from what it measured.
	started = post(t, s, "bench", `{"samples":40}`)
	until(t, "the second bench measures", func() bool {
		j := s.state().Job
		return j != nil && j.Running && j.Done > 0
	})
	if stop := post(t, s, "stop", `{}`); stop.Error != "" {
		t.Fatalf("stop: %+v", stop)
	}
	out = waitJob(t, s, started.Job)
	if out.Error != "" || !strings.Contains(strings.Join(out.Warnings, "\n"), "stopped early") {
		t.Errorf("a stopped bench: %+v", out)
	}
}

// modelOnly is what the page adds, on the model, to the command line of a
// command that has no --simulate.
const modelOnly = " (on the model; this command would change this machine)"

// TestOneHoldAtATime: holds requested at once, from the page and the
// tray, are one hold and refusals; Release releases it and the period
// returns to the coarsest.
func TestOneHoldAtATime(t *testing.T) {
	s, _ := newTestServer(t, "narrow-band")
	s.recommended = &timerinfo.Setting{Resolution100ns: 9000}
	outs := make([]*Outcome, 4)
	var wg sync.WaitGroup
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 0 {
				outs[i] = s.trayHold()
				return
			}
			outs[i] = s.hold(applyRequest{"resolution": strconv.Itoa(5000 + 1000*i)})
		}()
	}
	wg.Wait()
	held := 0
	for _, out := range outs {
		switch {
		case out.Error == "":
			held++
		case !strings.Contains(out.Error, "release it first"):
			t.Errorf("a refused hold says %q", out.Error)
		}
	}
	if held != 1 {
		t.Fatalf("%d of %d holds at once were accepted: %+v", held, len(outs), outs)
	}
	if out := s.release(); out.Error != "" {
		t.Fatalf("release: %+v", out)
	}
	until(t, "the period returns to the coarsest after release", func() bool {
		st := s.state()
		return st.Held == nil && st.Windows.Current100ns == 156250
	})
}

// TestBenchAndHoldExclude: a bench withdraws the page's hold (one timer
// request per process), so each is refused while the other runs.
func TestBenchAndHoldExclude(t *testing.T) {
	s, _ := newTestServer(t, "narrow-band")
	if out := post(t, s, "hold", `{"resolution":"5118"}`); out.Error != "" {
		t.Fatalf("hold: %+v", out)
	}
	if out := post(t, s, "bench", `{"samples":20}`); !strings.HasPrefix(out.Error, "the page holds 0.5118 ms") || !strings.HasSuffix(out.Error, ": release it first") {
		t.Errorf("bench while held: %+v", out)
	}
	if out := post(t, s, "measure", `{"samples":5}`); out.Error != "" {
		t.Errorf("measure while held (it measures the hold): %+v", out)
	} else {
		waitJob(t, s, out.Job)
	}
	post(t, s, "release", `{}`)
	started := post(t, s, "bench", `{"samples":40}`)
	if started.Error != "" {
		t.Fatalf("bench: %+v", started)
	}
	if out := post(t, s, "hold", `{"resolution":"5118"}`); out.Error != "a bench is running: wait for it, or press Stop, then hold" {
		t.Errorf("hold while a bench runs: %+v", out)
	}
	s.mu.Lock()
	s.recommended = &timerinfo.Setting{Resolution100ns: 5118}
	s.mu.Unlock()
	if out := s.trayHold(); out.Error != "a bench is running: wait for it, or press Stop, then hold" {
		t.Errorf("the tray's hold while a bench runs: %+v", out)
	}
	post(t, s, "stop", `{}`)
	waitJob(t, s, started.Job)
}

// TestHoldSuggestionSaysItsValue: before a bench the Hold form offers
// 0.5 ms within what the machine offers, and says the value it offers.
func TestHoldSuggestionSaysItsValue(t *testing.T) {
	s, _ := newTestServer(t, "narrow-band")
	for _, tc := range []struct {
		finest     uint32
		value, say string
	}{
		{5000, "0.5000", "a common choice"},
		{10000, "1.0000", "the nearest this machine offers to 0.5 ms"},
	} {
		h := s.suggestion(&timerinfo.Report{Windows: &timerinfo.Windows{Finest100ns: tc.finest, Coarsest100ns: 156250}})
		if h.Flag != "ms" || h.Value != tc.value || !strings.HasPrefix(h.From, tc.say) || h.FromBench {
			t.Errorf("finest %d: %+v, want %s and %q", tc.finest, h, tc.value, tc.say)
		}
	}
}

// TestWhoReadAgainAfterAnAction: an action while who is being read leaves
// the cache stale, so the next state reads it again.
func TestWhoReadAgainAfterAnAction(t *testing.T) {
	s, _ := newTestServer(t, "narrow-band")
	s.o.System.(*sim.System).IsElevated = true
	q, _ := s.host.Query()
	s.mu.Lock()
	s.who(q)
	reading := s.holders.reading
	s.holders.stale = true // as act() sets it, while the read runs
	s.mu.Unlock()
	if reading == nil {
		t.Fatal("no read of who started")
	}
	<-reading
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.holders.stale {
		t.Fatal("the read in flight cleared the action's stale mark")
	}
	if s.who(q); s.holders.reading == nil {
		t.Error("the next state did not read who again")
	}
}

// blockingStartup's Read waits until released, as a call to the Task
// Scheduler service can take seconds.
type blockingStartup struct {
	seam.Startup
	entered, release chan struct{}
}

func (b blockingStartup) Read() ([]byte, error) {
	b.entered <- struct{}{}
	<-b.release
	return b.Startup.Read()
}

type startupSystem struct {
	seam.System
	startup seam.Startup
}

func (s startupSystem) Startup() seam.Startup { return s.startup }

// TestStartupReadWithoutTheLock: reading the startup holder's definition
// (the Task Scheduler service on Windows) leaves the page's actions and the
// tray free.
func TestStartupReadWithoutTheLock(t *testing.T) {
	sys := &sim.System{}
	sys.NewStartup("Task Scheduler task tickscope (test)")
	st := blockingStartup{Startup: sys.Startup(), entered: make(chan struct{}), release: make(chan struct{})}
	s, err := New(Options{Host: mustModel(t), System: startupSystem{System: sys, startup: st}, Shell: &sim.Shell{}}, "127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	read := make(chan *State)
	go func() { read <- s.state() }()
	<-st.entered
	if !s.mu.TryLock() {
		t.Error("the state holds s.mu while the startup holder's definition is read")
	} else {
		s.mu.Unlock()
	}
	close(st.release)
	if got := <-read; !got.Startup.Available {
		t.Errorf("the startup holder: %+v", got.Startup)
	}
}

// TestHoldWhile: Hold with the while field is apply --while: the page
// waits with nothing held, holds once the program runs, and says which;
// Start at logon passes --while to the holder.
func TestHoldWhile(t *testing.T) {
	s, _ := newTestServer(t, "global-key")
	sys := s.o.System.(*sim.System)
	var mu sync.Mutex
	var running []sim.RunningProcess
	sys.Running = func() []sim.RunningProcess { mu.Lock(); defer mu.Unlock(); return running }
	out := post(t, s, "hold", `{"ms":"1","while":"game.exe"}`)
	if out.Error != "" || out.Command != "tickscope apply --resolution 10000 --while game.exe"+modelOnly ||
		!strings.Contains(out.Text, "SIMULATED  waiting for game.exe (looked for every 1s): nothing is held until one runs") {
		t.Fatalf("hold --while: %+v", out)
	}
	if st := s.state(); st.Held == nil || st.Held.While != "waiting for game.exe" {
		t.Fatalf("waiting, the state shows %+v", st.Held)
	}
	mu.Lock()
	running = []sim.RunningProcess{{PID: 4242, Name: "game.exe"}}
	mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for st := s.state(); st.Held.While != "holding for game.exe (pid 4242)"; st = s.state() {
		if time.Now().After(deadline) {
			t.Fatalf("10 s after game.exe started the state shows %+v", st.Held)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st := s.state(); !strings.Contains(st.Held.Text, "game.exe (pid 4242) started: holding, granted 0.9998 ms") {
		t.Errorf("the held text: %q", st.Held.Text)
	}
	if out := post(t, s, "release", `{}`); out.Error != "" || !strings.Contains(out.Text, "the setting was held") {
		t.Errorf("release: %+v", out)
	}
	if out := post(t, s, "hold", `{"ms":"1","while":"game.exe,GAME.EXE"}`); !strings.Contains(out.Error, "name the same program") {
		t.Errorf("a program given twice: %+v", out)
	}
	out = post(t, s, "persist", `{"ms":"1","while":"game.exe"}`)
	if out.Command != "tickscope apply --resolution 10000 --while game.exe --persist"+modelOnly || !strings.Contains(out.Text, "holder --resolution 10000 --no-console --no-esc --while game.exe at logon") {
		t.Errorf("persist --while: %+v", out)
	}
}

// The Hold's text keeps what it printed when it began to wait and the
// last maxEventLines lines of starts and exits.
func TestAppendEventTextIsBounded(t *testing.T) {
	head := "waiting for game.exe\n"
	text := head
	for i := range 1000 {
		text = appendEventText(text, len(head), fmt.Sprintf("event %d\n", i))
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) != 1+maxEventLines || lines[0] != "waiting for game.exe" || lines[1] != "(older starts and exits left out)" || lines[len(lines)-1] != "event 999" {
		t.Errorf("%d lines: %q ... %q", len(lines), lines[:3], lines[len(lines)-1])
	}
	if got := appendEventText(head, len(head), "event 0\n"); got != head+"event 0\n" {
		t.Errorf("%q", got)
	}
}
