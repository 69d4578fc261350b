package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/httpserver"
	"github.com/tickscope/tickscope/internal/inspect"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/timerstate"
	"github.com/tickscope/tickscope/internal/who"
)

// State is what the page shows live: one event a second, and one at once
// whenever an action or a job changes something.
type State struct {
	// Simulated is the model's scenario, "" on this machine.
	Simulated string `json:"simulated,omitempty"`
	// Updated is when the timer was read (UTC, RFC 3339 with ms).
	Updated  string         `json:"updated"`
	OS       string         `json:"os"`
	Elevated bool           `json:"elevated"`
	Windows  *WindowsState  `json:"windows,omitempty"`
	Linux    *LinuxState    `json:"linux,omitempty"`
	Warnings []string       `json:"warnings"`
	Error    string         `json:"error,omitempty"`
	Query    string         `json:"query_text"`
	Methods  []string       `json:"methods"`
	Startup  StartupView    `json:"startup"`
	Held     *HeldView      `json:"held"`
	Who      WhoView        `json:"who"`
	Job      *JobView       `json:"job"`
	Hold     HoldSuggestion `json:"hold"`
	// SimFlags are measure's and bench's --simulate and --seed on the
	// model ("" on this machine), and ModelOnly what the command line of a
	// command that has no --simulate adds on the model: the page shows
	// each form's command line before it is pressed.
	SimFlags  string `json:"sim_flags"`
	ModelOnly string `json:"model_only"`
}

// WindowsState is the Windows timer as query reads it.
type WindowsState struct {
	Current       string `json:"current_ms"`
	Finest        string `json:"finest_ms"`
	Coarsest      string `json:"coarsest_ms"`
	Current100ns  uint32 `json:"current_100ns"`
	Finest100ns   uint32 `json:"finest_100ns"`
	Coarsest100ns uint32 `json:"coarsest_100ns"`
	RequestModel  string `json:"request_model"`
	GlobalKey     string `json:"global_key"`
	Reach         string `json:"reach"`
}

// LinuxState is what Linux has instead of a timer period.
type LinuxState struct {
	DMALatency  string `json:"cpu_dma_latency"`
	Clocksource string `json:"clocksource"`
	HZ          int64  `json:"hz"`
	Root        bool   `json:"root"`
}

// StartupView is tickscope's startup holder (apply --persist), as status
// shows it.
type StartupView struct {
	Available bool   `json:"available"`
	Installed bool   `json:"installed"`
	Running   bool   `json:"running"`
	Text      string `json:"text"`
	// Boot is the boot service (apply --persist --boot), nil where the
	// OS has none; Text shows it after the startup holder.
	Boot *BootView `json:"boot"`
}

// BootView is the boot service as status shows it.
type BootView struct {
	Installed bool   `json:"installed"`
	State     string `json:"state"`
}

// HeldView is what the page holds now.
type HeldView struct {
	Setting string `json:"setting"`
	Since   string `json:"since"`
	Command string `json:"command"`
	Text    string `json:"text"`
	// While says what a hold with --while does now: "waiting for
	// game.exe" or "holding for game.exe (pid 4242)"; omitted without.
	While string `json:"while,omitempty"`
	// Warnings are hold's so far, the keeper's included, as they come.
	Warnings []string `json:"warnings"`
}

// WhoView says who holds the timer, as tickscope who shows it, or why
// that is not shown.
type WhoView struct {
	Shown  bool   `json:"shown"`
	Reason string `json:"reason"`
	Text   string `json:"text,omitempty"`
}

// HoldSuggestion is what the Hold form offers: which setting this OS
// holds, as apply's flag (Windows: ms, a period in milliseconds; Linux:
// dma-latency, in µs), and the value (the last bench's recommendation,
// which the page offers to hold with one click, or the double-click's
// suggestion).
type HoldSuggestion struct {
	Flag      string `json:"flag"`
	Value     string `json:"value"`
	From      string `json:"from"`
	FromBench bool   `json:"from_bench"`
}

// startupCache keeps the startup holder's definition between reads.
type startupCache struct {
	at    time.Time
	state *inspect.StartupState
	boot  *inspect.StartupState
}

// startupEvery is how often the startup definition is read again: on
// Windows that is a call to the Task Scheduler service.
const startupEvery = 10 * time.Second

// state reads the live state now.
func (s *Server) state() *State {
	st := &State{Simulated: s.o.Scenario, Updated: time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), Elevated: s.o.System.Elevated(), Warnings: []string{}, SimFlags: s.simFlags()}
	st.ModelOnly = strings.TrimPrefix(s.onModel(""), " ")
	for _, m := range s.host.Methods() {
		st.Methods = append(st.Methods, m.Name)
	}
	q, err := s.host.Query()
	if err != nil {
		st.Error = err.Error()
	} else {
		st.fill(q)
	}
	startup := s.readStartup(q)
	s.mu.Lock()
	defer s.mu.Unlock()
	st.Startup = startup
	if s.held != nil {
		st.Held = s.held.view()
	}
	if s.job != nil {
		st.Job = s.job.view()
	}
	if q != nil {
		st.Hold = s.suggestion(q)
	}
	st.Who = s.who(q)
	return st
}

func (st *State) fill(q *timerinfo.Report) {
	st.OS = q.OS
	st.Warnings = append(st.Warnings, q.Warnings...)
	var text bytes.Buffer
	report.WriteQuery(&text, q)
	st.Query = text.String()
	// The timer state as watch reads it (its one reading of the query),
	// with what the page adds from the same query.
	now := timerstate.StateOf(q)
	if w := q.Windows; w != nil {
		st.Windows = &WindowsState{
			Current: timerinfo.FormatPeriodMS(now.Current100ns), Finest: timerinfo.FormatPeriodMS(now.Finest100ns), Coarsest: timerinfo.FormatPeriodMS(now.Coarsest100ns),
			Current100ns: now.Current100ns, Finest100ns: now.Finest100ns, Coarsest100ns: now.Coarsest100ns,
			RequestModel: now.RequestModel, GlobalKey: report.RegistryValue(w.GlobalTimerResolutionRequests), Reach: w.Reach(),
		}
	}
	if l := q.Linux; l != nil {
		st.Linux = &LinuxState{Clocksource: l.Clocksource, HZ: l.HZ, Root: l.Root, DMALatency: "unknown (" + l.CPUDMALatencyErr + ")"}
		if now.DMALatencyUs != nil {
			st.Linux.DMALatency = report.DMALatency(*now.DMALatencyUs)
		}
	}
}

// readStartup reads the startup holder, its definition at most every
// startupEvery, without s.mu: on Windows that calls the Task Scheduler
// service, and the
// page's actions and the tray would wait for it.
func (s *Server) readStartup(q *timerinfo.Report) StartupView {
	windows := q != nil && q.Windows != nil
	s.mu.Lock()
	cached := s.startup
	s.mu.Unlock()
	if cached.at.IsZero() || time.Since(cached.at) > startupEvery {
		cached = startupCache{at: time.Now(), state: inspect.ReadStartup(s.o.System, windows), boot: inspect.ReadBootService(s.o.System)}
		s.mu.Lock()
		s.startup = cached
		s.mu.Unlock()
	} else if cached.state != nil {
		// Whether it runs is one lock probe: read it every time.
		now := *cached.state
		now.PID, now.Running = s.o.System.Holder()
		cached.state = &now
	}
	v := StartupView{}
	if st := cached.state; st != nil {
		v.Available, v.Installed, v.Running = true, st.Installed, st.Running
	}
	var text bytes.Buffer
	inspect.WriteStartup(&text, cached.state)
	if b := cached.boot; b != nil {
		v.Boot = &BootView{Installed: b.Installed, State: b.State}
		fmt.Fprintln(&text)
		inspect.WriteBootService(&text, b)
	}
	v.Text = text.String()
	return v
}

// forgetStartup makes the next state read the definition again, after an
// action that changed it.
func (s *Server) forgetStartup() {
	s.mu.Lock()
	s.startup = startupCache{}
	s.mu.Unlock()
}

// whoCache is who holds the timer as last read, and when; stale is set by
// an action that may have changed it (a hold, its release), so that the
// page shows the change at its next reading, not up to whoEvery later.
type whoCache struct {
	at    time.Time
	view  WhoView
	stale bool
	// reading is closed when the read in flight ends; nil when none is.
	reading chan struct{}
}

// whoEvery is how often who holds the timer is read again while the page
// is open: on Windows an ETW rundown, on Linux a walk of /proc, too much
// for every second.
const whoEvery = 10 * time.Second

// who says who holds the timer, as tickscope who does (inspect.Who, shown by
// inspect.WhoText), read again every whoEvery on a goroutine of its own, or
// why it is not shown: on Windows without elevation the sentence who says
// (s.mu held).
func (s *Server) who(q *timerinfo.Report) WhoView {
	switch {
	case q == nil:
		return WhoView{Reason: "not shown: the timer could not be read"}
	case q.Windows != nil && !s.o.System.Elevated():
		return WhoView{Reason: "not shown: " + who.NeedsElevation}
	}
	if s.holders.reading == nil && !s.closed && (s.holders.stale || time.Since(s.holders.at) > whoEvery) {
		s.holders.stale = false
		s.holders.reading = make(chan struct{})
		go s.readWho(s.holders.reading)
	}
	if s.holders.at.IsZero() {
		return WhoView{Reason: "reading…"}
	}
	return s.holders.view
}

// readWho reads who holds the timer and wakes the event streams, then
// closes done. An action while it reads leaves the cache stale: its
// change may come after what this read saw, so the next state reads again.
func (s *Server) readWho(done chan struct{}) {
	defer close(done)
	view := WhoView{Shown: true}
	rep, err := inspect.Who(s.ctx, s.host, s.o.System, 0, nil)
	if err != nil {
		view = WhoView{Reason: "not shown: " + err.Error()}
	} else {
		view.Text = text(func(w io.Writer) { (&inspect.WhoText{W: w}).Read(rep) })
		view.Reason = "read " + time.Now().UTC().Format("15:04:05") + " UTC, every " + whoEvery.String() + " while this page is open"
	}
	s.mu.Lock()
	s.holders = whoCache{at: time.Now(), view: view, stale: s.holders.stale}
	s.mu.Unlock()
	s.notify()
}

// events streams the state as server-sent events: one a second, and one
// at once after each change, until the page goes or the server closes.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	s.mu.Lock()
	loaded := s.loaded
	s.mu.Unlock()
	if loaded != nil {
		loaded()
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		data, err := json.Marshal(s.state())
		if err != nil {
			return
		}
		// The stream has no time limit as a whole, only each write: a
		// page that stops reading is cut off.
		if err := httpserver.ExtendWrite(w, r); err != nil {
			return
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", data); err != nil {
			return
		}
		flusher.Flush()
		s.mu.Lock()
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-tick.C:
		case <-changed:
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			return
		}
	}
}
