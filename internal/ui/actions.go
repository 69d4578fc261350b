package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tickscope/tickscope/internal/global"
	"github.com/tickscope/tickscope/internal/hold"
	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/startup"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/timerstate"
	"github.com/tickscope/tickscope/internal/version"
)

// act runs the named action with its JSON body and answers its outcome.
// A body readAction refuses is a 400 with its reason, and runs nothing.
func (s *Server) act(w http.ResponseWriter, r *http.Request, action string) {
	decode := func(v any, fields []string) bool {
		if err := readAction(w, r, v, fields); err != nil {
			status := http.StatusBadRequest
			if errors.Is(err, errBodyTooLarge) {
				status = http.StatusRequestEntityTooLarge
			}
			http.Error(w, "bad request: "+err.Error(), status)
			return false
		}
		return true
	}
	var out *Outcome
	switch action {
	case "measure":
		req := measureRequest{Samples: 200}
		if !decode(&req, nil) {
			return
		}
		out = s.measure(req)
	case "bench":
		req := benchRequest{Samples: 200, Prefer: "latency"}
		if !decode(&req, nil) {
			return
		}
		out = s.bench(req)
	case "stop", "release", "remove":
		if !decode(&struct{}{}, nil) {
			return
		}
		switch action {
		case "stop":
			out = s.stop()
		case "release":
			out = s.release()
		default:
			out = s.removeStartup()
		}
	case "hold", "persist":
		var req applyRequest
		if !decode(&req, applyFlags) {
			return
		}
		if action == "hold" {
			out = s.hold(req)
		} else {
			out = s.persist(req)
		}
	case "global", "elevate":
		var req globalRequest
		if !decode(&req, nil) {
			return
		}
		if action == "global" {
			out = s.global(req.On)
		} else {
			out = s.elevate(req.On)
		}
	default:
		http.NotFound(w, r)
		return
	}
	if out.Job == 0 {
		s.label(out)
	}
	s.mu.Lock()
	s.holders.stale = true
	s.mu.Unlock()
	s.notify()
	writeJSON(w, out)
}

// onModel is the command line of a command that has no --simulate, as the
// page shows it: on the model it says that it would change this machine.
func (s *Server) onModel(command string) string {
	if s.o.Scenario == "" {
		return command
	}
	return command + " (on the model; this command would change this machine)"
}

// simulated is text with every line labelled SIMULATED on the model, as
// the commands label what they compute on it.
func (s *Server) simulated(text string) string {
	prefix := report.SimulatedPrefix(s.o.Scenario)
	if prefix == "" || text == "" {
		return text
	}
	lines := strings.SplitAfter(text, "\n")
	for i, line := range lines {
		if line != "" && !strings.HasPrefix(line, prefix) {
			lines[i] = prefix + line
		}
	}
	return strings.Join(lines, "")
}

// label labels an action's outcome on the model: its text and warnings
// (its error is the command's own, word for word).
func (s *Server) label(out *Outcome) {
	out.Text = s.simulated(out.Text)
	for i, w := range out.Warnings {
		out.Warnings[i] = strings.TrimSuffix(s.simulated(w+"\n"), "\n")
	}
}

// stop ends the running job early; it reports what it measured.
func (s *Server) stop() *Outcome {
	s.mu.Lock()
	j := s.job
	s.mu.Unlock()
	if j == nil || !j.view().Running {
		return &Outcome{Warnings: []string{}, Error: "nothing is running"}
	}
	j.stop()
	return &Outcome{Command: j.command, Warnings: []string{}, Text: "stopping: the result covers what was measured so far"}
}

// applyRequest is apply's arguments as a form sends them: flag name
// (without the dashes) to value, as typed. Only applyFlags are taken.
type applyRequest map[string]string

// applyFlags are the flags of apply the page's forms give: the setting to
// hold (Windows --resolution or --ms, Linux --dma-latency) and the
// programs it is held for (--while), or a process and the timer slack to
// set it to.
var applyFlags = []string{"resolution", "ms", "dma-latency", "while", "pid", "slack"}

// options is the request as apply's options, each value parsed as
// apply's command line parses its flag (the same words for every
// refusal), in the order of applyFlags.
func (req applyRequest) options(persist bool) (hold.ApplyFlags, error) {
	f := hold.ApplyFlags{Persist: persist}
	for _, name := range applyFlags {
		v, ok := req[name]
		if !ok {
			continue
		}
		var err error
		switch name {
		case "resolution":
			f.Resolution, err = options.ParseUint32(name, v)
			f.ResolutionSet = true
		case "ms":
			f.MS, err = options.ParseFloat64(name, v)
			f.MSSet = true
		case "dma-latency":
			f.DMALatency, err = options.ParseInt32(name, v)
			f.DMALatencySet = true
		case "while":
			f.While, f.WhileSet = v, true
		case "pid":
			f.PID, err = options.ParseInt(name, v)
			f.PIDSet = true
		case "slack":
			f.Slack, err = options.ParseDurationFlag(name, v)
			f.SlackSet = true
		}
		if err != nil {
			return f, err
		}
	}
	if f.WhileSet && f.While == "" {
		return f, options.EmptyValue("while", hold.WhileUsage)
	}
	return f, nil
}

// apply takes the request as apply's options (with --persist when persist
// is set) and checks them as apply does, with the same words for every
// refusal; command is the command line a user would type for it.
func (s *Server) apply(req applyRequest, persist bool) (command string, q *timerinfo.Report, p *hold.ApplyPlan, err error) {
	var args []string
	for _, name := range applyFlags {
		if v, ok := req[name]; ok {
			args = append(args, "--"+name, v)
		}
	}
	if persist {
		args = append(args, "--persist")
	}
	show := func(args []string) string {
		shown := []string{"tickscope", "apply"}
		for _, a := range args {
			shown = append(shown, options.Value(a))
		}
		return s.onModel(strings.Join(shown, " "))
	}
	command = show(args)
	f, err := req.options(persist)
	if err != nil {
		return command, nil, nil, err
	}
	if q, err = s.host.Query(); err != nil {
		return command, nil, nil, err
	}
	if err := hold.CheckApply(q, f); err != nil {
		return command, nil, nil, err
	}
	p, err = hold.PlanApply(q, f)
	if err == nil && f.MSSet && p.Setting.Resolution100ns != 0 {
		// A period typed in ms is shown as the command a user would type
		// again: in the 100 ns units the OS counts in, as the bench
		// recommends and the startup holder holds it.
		if i := slices.Index(args, "--ms"); i >= 0 {
			args[i], args[i+1] = "--resolution", strconv.FormatUint(uint64(p.Setting.Resolution100ns), 10)
			command = show(args)
		}
	}
	return command, q, p, err
}

// holding is a setting the page holds: hold.Hold, as apply runs it, on a
// goroutine of its own until Release or quit.
type holding struct {
	command string
	setting timerinfo.Setting
	cancel  context.CancelFunc
	done    chan struct{}
	// final and err are hold.Hold's answer, read once done is closed.
	final *hold.HoldReport
	err   error

	// mu guards what hold's goroutine writes while the page reads it:
	// the holding text, its start, and hold's warnings (the keeper's
	// included, shown live), of which the first shown are already in the
	// Hold's outcome.
	mu       sync.Mutex
	since    time.Time
	text     string
	warnings []string
	shown    int
	// while says what a hold with --while does now: "waiting for ..." or
	// "holding for ...", "" without --while.
	while string
	// eventsAt is where the lines of a --while hold's starts and exits
	// begin in text, after what it printed when it began to wait.
	eventsAt int
}

// maxEventLines bounds the lines of starts and exits the hold's text
// keeps: the text is sent with every state read (each second while the
// page is open), and a holder that sees a game start thousands of times
// would send all of them; 200 lines is a screenful or two and some 20 KB.
// The hold's own report keeps its last 1000 events (apply --json).
const maxEventLines = 200

// appendEventText appends an event's lines to text, whose event lines
// begin at eventsAt, keeping the last maxEventLines of them and a line
// that says older ones were left out.
func appendEventText(text string, eventsAt int, event string) string {
	head, events := text[:eventsAt], text[eventsAt:]+event
	lines := strings.SplitAfter(events, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) <= maxEventLines {
		return head + events
	}
	return head + "(older starts and exits left out)\n" + strings.Join(lines[len(lines)-maxEventLines+1:], "")
}

func (h *holding) warn(msgs ...string) {
	h.mu.Lock()
	h.warnings = append(h.warnings, msgs...)
	h.mu.Unlock()
}

func (h *holding) view() *HeldView {
	h.mu.Lock()
	defer h.mu.Unlock()
	return &HeldView{Setting: h.setting.String(), Since: h.since.UTC().Format(time.RFC3339), Command: h.command, Text: h.text, While: h.while, Warnings: append([]string{}, h.warnings...)}
}

// release ends the hold and waits until the setting is withdrawn.
func (h *holding) release() {
	h.cancel()
	<-h.done
}

// untilText is what ends the page's hold, where apply names its keys.
const untilText = "Release is pressed or tickscope ui quits (closing the page does not end it)"

// reserveHold takes the page's one hold slot for setting (s.mu held), or
// says why not: the page holds one, one is being requested, or a job
// runs. Windows keeps one timer request per process, and a bench applies
// and withdraws its candidates through it, withdrawing the page's hold
// (whose keeper puts it back every few seconds, spoiling the bench); a
// measure would measure a period that changed under it.
func (s *Server) reserveHold() error {
	switch {
	case s.held != nil && s.releasing:
		return fmt.Errorf("the page is releasing %s: wait for it, then hold", s.held.setting)
	case s.held != nil:
		return fmt.Errorf("the page already holds %s: release it first", s.held.setting)
	case s.holdPending:
		return errors.New("the page is already requesting a hold: wait for it, then release it first")
	case s.job != nil && s.job.view().Running:
		return fmt.Errorf("a %s is running: wait for it, or press Stop, then hold", s.job.kind)
	case s.closed:
		return errors.New("tickscope ui is quitting")
	}
	s.holdPending = true
	return nil
}

// hold is `tickscope apply SETTING`: the setting is checked by apply's
// rules, requested, checked with a short measurement, and held until
// Release or quit. Given a process and a slack (Linux), it sets that
// process's timer slack and returns, as apply --pid --slack does.
func (s *Server) hold(req applyRequest) *Outcome {
	command, q, p, err := s.apply(req, false)
	if err != nil {
		return failed(command, err)
	}
	if p.Kind == hold.SetProcessSlack {
		out := &Outcome{Command: command, Warnings: []string{}}
		change, err := hold.SetSlack(s.o.System, p.PID, p.Slack, func(msg string) { out.warn("%s", msg) })
		if err != nil {
			return failed(command, err)
		}
		out.Text = s.simulated(text(func(w io.Writer) { hold.WriteSlackChange(w, change) }))
		return out
	}
	s.mu.Lock()
	err = s.reserveHold()
	s.mu.Unlock()
	if err != nil {
		return failed(command, err)
	}
	ctx, cancel := context.WithCancel(s.ctx)
	h := &holding{command: command, setting: p.Setting, cancel: cancel, done: make(chan struct{})}
	holding := make(chan struct{})
	go func() {
		defer close(h.done)
		h.final, h.err = hold.Hold(ctx, s.host, s.o.System, q, p.Setting, hold.HoldOptions{
			NoEsc: true,
			Warn: func(msg string) {
				h.warn(msg)
				s.notify()
			},
			Holding: func(rep *hold.HoldReport) {
				rep.Until = untilText
				h.mu.Lock()
				h.text, h.since = s.simulated(text(func(w io.Writer) { hold.WriteHolding(w, rep) })), time.Now()
				h.mu.Unlock()
				h.warn(rep.Warnings...)
				close(holding)
			},
			While:     p.While,
			WhileUser: p.WhileUser,
			Waiting: func(rep *hold.HoldReport) {
				rep.Until = untilText
				h.mu.Lock()
				h.text, h.since = s.simulated(text(func(w io.Writer) { hold.WriteWaiting(w, rep) })), time.Now()
				h.eventsAt = len(h.text)
				h.while = "waiting for " + strings.Join(p.While, ", ")
				h.mu.Unlock()
				h.warn(rep.Warnings...)
				close(holding)
			},
			Changed: func(state hold.WhileState, e *hold.ProgramEvent) {
				h.mu.Lock()
				if e != nil {
					h.text = appendEventText(h.text, h.eventsAt, s.simulated(text(func(w io.Writer) { hold.WriteProgramEvent(w, state, e) })))
				}
				h.while = "waiting for " + strings.Join(state.Programs, ", ")
				if state.Holding {
					h.while = "holding for " + timerstate.HoldingFor(state.Running)
				}
				h.mu.Unlock()
				s.notify()
			},
		})
	}()
	var established bool
	select {
	case <-holding:
		established = true
	case <-h.done:
		cancel()
	}
	s.mu.Lock()
	s.holdPending = false
	closed := s.closed
	if established && !closed {
		s.held = h
	}
	s.mu.Unlock()
	switch {
	case !established:
		out := failed(command, h.err)
		out.Warnings = append(out.Warnings, h.warnings...)
		return out
	case closed:
		h.release()
		return failed(command, errors.New("tickscope ui is quitting"))
	}
	out := &Outcome{Command: command, Warnings: []string{}}
	h.mu.Lock()
	out.Text, out.Warnings = h.text, append(out.Warnings, h.warnings...)
	h.shown = len(h.warnings)
	h.mu.Unlock()
	return out
}

// release ends the page's hold, as ESC or Ctrl+C end apply's; its
// warnings are those not already in the Hold's outcome.
func (s *Server) release() *Outcome {
	s.mu.Lock()
	h, pending, releasing := s.held, s.holdPending, s.releasing
	if h != nil {
		s.releasing = true
	}
	s.mu.Unlock()
	switch {
	case releasing:
		return failed("", errors.New("the hold is already being released"))
	case h == nil && pending:
		return failed("", errors.New("the hold is still being requested: press Release once it holds"))
	case h == nil:
		return failed("", errors.New("the page holds nothing"))
	}
	h.release()
	// Only now is the setting withdrawn: the state showed it held until
	// here.
	s.mu.Lock()
	if s.held == h {
		s.held = nil
	}
	s.releasing = false
	s.mu.Unlock()
	if h.err != nil {
		return failed(h.command, h.err)
	}
	h.final.EndedBy = hold.EndedByUI
	out := &Outcome{Command: h.command, Warnings: []string{}}
	h.mu.Lock()
	out.Warnings = append(out.Warnings, h.warnings[h.shown:]...)
	h.mu.Unlock()
	out.Text = s.simulated(text(func(w io.Writer) { hold.WriteReleased(w, h.final) }))
	return out
}

// persist is `tickscope apply SETTING --persist`: the startup holder, by
// apply's rules, which refuse it where it would hold nothing useful.
func (s *Server) persist(req applyRequest) *Outcome {
	defer s.forgetStartup()
	command, q, p, err := s.apply(req, true)
	if err != nil {
		return failed(command, err)
	}
	res, err := startup.Persist(s.host, s.o.System, q, p.Setting, p.HolderArgs, startup.PersistOptions{Version: version.String(), While: p.While})
	if err != nil {
		return failed(command, err)
	}
	return &Outcome{Command: command, Text: text(func(w io.Writer) { startup.WritePersist(w, res) }), Warnings: append([]string{}, startup.PersistWarnings(res)...)}
}

// removeStartup is `tickscope startup remove`.
func (s *Server) removeStartup() *Outcome {
	command := s.onModel("tickscope startup remove")
	defer s.forgetStartup()
	res, err := startup.RemoveStartup(s.host, s.o.System)
	if err != nil {
		return failed(command, err)
	}
	out := &Outcome{Command: command, Warnings: []string{}, Text: text(func(w io.Writer) { startup.WriteRemove(w, res) })}
	if res.StillRaised != "" {
		out.warn("%s", res.StillRaised)
	}
	if left := res.NotDone(); left != "" {
		out.Error = options.OneLine(left)
	}
	return out
}

type globalRequest struct {
	On bool `json:"on"`
}

func globalCommand(on bool) (string, []string) {
	args := []string{"global", map[bool]string{true: "on", false: "off"}[on]}
	return "tickscope " + args[0] + " " + args[1], args
}

// global is `tickscope global on|off`. Refused for want of elevation, it
// offers to run the same command elevated (Windows).
func (s *Server) global(on bool) *Outcome {
	plain, _ := globalCommand(on)
	command := s.onModel(plain)
	q, err := s.host.Query()
	if err != nil {
		return failed(command, err)
	}
	res, err := global.SetGlobal(q, s.o.System, on)
	if err != nil {
		out := failed(command, err)
		if errors.Is(err, global.ErrGlobalNeedsElevation) {
			out.Elevate = plain
		}
		return out
	}
	out := &Outcome{Command: command, Warnings: []string{}, Text: text(func(w io.Writer) { global.WriteGlobal(w, res) })}
	if res.Warning != "" {
		out.warn("%s", res.Warning)
	}
	return out
}

// elevate runs `tickscope global on|off` elevated: Windows shows its
// consent prompt, and the page says what it ran and how it ended (the
// key itself shows in the live state).
func (s *Server) elevate(on bool) *Outcome {
	command, args := globalCommand(on)
	if s.o.Scenario != "" {
		return failed(command, errors.New(report.SimulatedPrefix(s.o.Scenario)+"on Windows this runs "+command+" elevated, after the consent prompt; on the model nothing is run"))
	}
	exe, err := s.o.System.Executable()
	if err != nil {
		return failed(command, err)
	}
	code, err := s.o.Shell.RunElevated(exe, args)
	if err != nil {
		return failed(command, fmt.Errorf("running %s elevated: %w", command, err))
	}
	out := &Outcome{Command: command, Warnings: []string{}, Text: fmt.Sprintf("ran %s through the shell's runas verb (Windows asks for consent first when tickscope is not elevated); it exited with code %d\n", command, code)}
	if code != 0 {
		out.Error = fmt.Sprintf("%s, run elevated, exited with code %d: run it in an elevated terminal to read why", command, code)
	}
	return out
}

// suggestion is what the Hold form offers on the OS q describes (s.mu
// held): on Windows a period in ms (the page shows the command line in
// 100 ns units beside it), on Linux a DMA latency in µs.
func (s *Server) suggestion(q *timerinfo.Report) HoldSuggestion {
	switch {
	case q.Windows != nil:
		if s.recommended != nil && s.recommended.Resolution100ns != 0 {
			return HoldSuggestion{Flag: "ms", Value: timerinfo.FormatPeriodMS(s.recommended.Resolution100ns), From: "the bench's recommendation", FromBench: true}
		}
		period := q.Windows.SuggestedPeriod()
		from := "a common choice: Bench finds this machine's best"
		if period != timerinfo.SuggestedPeriod100ns {
			from = "the nearest this machine offers to 0.5 ms, a common choice: Bench finds this machine's best"
		}
		return HoldSuggestion{Flag: "ms", Value: timerinfo.FormatPeriodMS(period), From: from}
	case q.Linux != nil:
		if s.recommended != nil && s.recommended.CPUDMALatencyUs != nil {
			return HoldSuggestion{Flag: "dma-latency", Value: strconv.Itoa(int(*s.recommended.CPUDMALatencyUs)), From: "the bench's recommendation", FromBench: true}
		}
		return HoldSuggestion{Flag: "dma-latency", Value: "0", From: "0 µs keeps every CPU out of idle states (root)"}
	}
	return HoldSuggestion{}
}
