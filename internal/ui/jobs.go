package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/tickscope/tickscope/internal/bench"
	"github.com/tickscope/tickscope/internal/htmlreport"
	"github.com/tickscope/tickscope/internal/measure"
	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/sweep"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// Outcome is an action's answer, and a job's result: what the command
// would have printed, its warnings, or its error, word for word.
type Outcome struct {
	// Command is the command line that does the same.
	Command  string   `json:"command"`
	Text     string   `json:"text,omitempty"`
	Chart    string   `json:"chart,omitempty"`
	Warnings []string `json:"warnings"`
	Error    string   `json:"error,omitempty"`
	// Field is the request's field Error refuses the value of, when it
	// refuses one field's value: the page marks that input.
	Field string `json:"field,omitempty"`
	// Elevate offers to run this command line elevated (Windows).
	Elevate string `json:"elevate,omitempty"`
	// Job is the job the action started, whose result /result gives.
	Job int `json:"job,omitempty"`
}

func (o *Outcome) warn(format string, args ...any) {
	o.Warnings = append(o.Warnings, fmt.Sprintf(format, args...))
}

// failed is the outcome of a command that failed with err, in the one
// line the command prints it in.
func failed(command string, err error) *Outcome {
	out := &Outcome{Command: command, Warnings: []string{}, Error: options.OneLine(err.Error())}
	var usage *options.UsageError
	if errors.As(err, &usage) && usage.Bound != nil {
		out.Field = usage.Bound.Option
	}
	return out
}

// job is a measurement the page started: measure or bench. One runs at a
// time; Stop ends it early with a result for what was measured, as ESC
// and Ctrl+C do in the terminal.
type job struct {
	id            int
	kind, command string
	cancel        context.CancelFunc
	done          chan struct{}

	mu        sync.Mutex
	taken, of int
	stopping  bool
	outcome   *Outcome
	started   time.Time
	finished  time.Time
}

// JobView is a job as the page shows it.
type JobView struct {
	ID       int    `json:"id"`
	Kind     string `json:"kind"`
	Command  string `json:"command"`
	Done     int    `json:"done"`
	Total    int    `json:"total"`
	Running  bool   `json:"running"`
	Stopping bool   `json:"stopping"`
	Seconds  int    `json:"seconds"`
}

func (j *job) view() *JobView {
	j.mu.Lock()
	defer j.mu.Unlock()
	v := &JobView{ID: j.id, Kind: j.kind, Command: j.command, Done: j.taken, Total: j.of, Running: j.outcome == nil, Stopping: j.stopping}
	end := time.Now()
	if j.outcome != nil {
		end = j.finished
	}
	v.Seconds = int(end.Sub(j.started).Seconds())
	return v
}

func (j *job) progress(done, total int) {
	j.mu.Lock()
	j.taken, j.of = done, total
	j.mu.Unlock()
}

func (j *job) stop() {
	j.mu.Lock()
	j.stopping = j.outcome == nil
	j.mu.Unlock()
	j.cancel()
}

// mayStart says why a job of kind may not start now (s.mu held), or nil.
// A measure measures what the timer is, the page's hold included; a bench
// applies and withdraws each candidate through this process's one timer
// request (Windows), which withdraws the page's hold, whose keeper puts it
// back every few seconds mid-bench: it is refused while the page holds.
func (s *Server) mayStart(kind string) error {
	switch {
	case s.closed:
		return errors.New("tickscope ui is quitting")
	case s.holdPending:
		return errors.New("the page is requesting a hold: wait for it")
	case kind == "bench" && s.held != nil && s.releasing:
		return fmt.Errorf("the page is releasing %s: wait for it, then bench", s.held.setting)
	case kind == "bench" && s.held != nil:
		return fmt.Errorf("the page holds %s, and a bench applies settings of its own: release it first", s.held.setting)
	}
	return nil
}

// start runs fn as the page's job, unless one runs.
func (s *Server) start(kind, command string, total int, fn func(ctx context.Context, j *job) *Outcome) *Outcome {
	s.mu.Lock()
	if s.job != nil && s.job.view().Running {
		running := s.job.kind
		s.mu.Unlock()
		return &Outcome{Command: command, Warnings: []string{}, Error: fmt.Sprintf("a %s is running: wait for it, or press Stop", running)}
	}
	if err := s.mayStart(kind); err != nil {
		s.mu.Unlock()
		return failed(command, err)
	}
	s.jobs++
	ctx, cancel := context.WithCancel(s.ctx)
	j := &job{id: s.jobs, kind: kind, command: command, cancel: cancel, done: make(chan struct{}), of: total, started: time.Now()}
	s.job = j
	s.mu.Unlock()
	go func() {
		defer close(j.done)
		out := fn(ctx, j)
		out.Command = command
		cancel()
		j.mu.Lock()
		j.outcome, j.finished = out, time.Now()
		j.mu.Unlock()
		s.notify()
	}()
	s.notify()
	return &Outcome{Command: command, Warnings: []string{}, Job: j.id}
}

// result answers /result?job=N: the job's outcome once it has finished.
func (s *Server) result(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.Atoi(r.URL.Query().Get("job"))
	s.mu.Lock()
	j := s.job
	s.mu.Unlock()
	if j == nil || j.id != id {
		http.NotFound(w, r)
		return
	}
	j.mu.Lock()
	out := j.outcome
	j.mu.Unlock()
	if out == nil {
		http.Error(w, "the job is running", http.StatusConflict)
		return
	}
	writeJSON(w, out)
}

// simFlags are the command line's --simulate and --seed on the model.
func (s *Server) simFlags() string {
	if s.o.Scenario == "" {
		return ""
	}
	flags := " --simulate " + s.o.Scenario
	if s.o.Seed != 1 {
		flags += fmt.Sprintf(" --seed %d", s.o.Seed)
	}
	return flags
}

// text renders a writer function to a string.
func text(write func(io.Writer)) string {
	var b bytes.Buffer
	write(&b)
	return b.String()
}

// chart draws result as htmlreport draws it in --html, without the page,
// labelled SIMULATED on the model as --html's page is.
func chart(f *rawfile.File, result any) string {
	var b bytes.Buffer
	if f.Simulated != "" {
		fmt.Fprintf(&b, `<div class="sim">SIMULATED: %s</div><p>Computed on the model of Windows timers, not measured on a machine.</p>`+"\n", html.EscapeString(f.Simulated))
	}
	if err := htmlreport.Body(&b, f, result); err != nil {
		return ""
	}
	return b.String()
}

type measureRequest struct {
	Method  string `json:"method"`
	Samples int    `json:"samples"`
}

// measure is `tickscope measure [--method M] --samples N`: the 1 ms wait's
// distribution, as measure measures and prints it.
func (s *Server) measure(req measureRequest) *Outcome {
	command := "tickscope measure"
	if req.Method != "" {
		command += " --method " + options.Value(req.Method)
	}
	command += fmt.Sprintf(" --samples %d", req.Samples) + s.simFlags()
	q, err := s.host.Query()
	if err != nil {
		return failed(command, err)
	}
	spec, err := measure.Measure(s.host, measure.Where(q, s.o.Scenario), req.Method, time.Millisecond, req.Samples)
	if err != nil {
		return failed(command, err)
	}
	return s.start("measure", command, spec.Samples+spec.Warmup, func(ctx context.Context, j *job) *Outcome {
		out := &Outcome{Warnings: []string{}}
		file, printed, err := measure.RunMeasure(ctx, s.host, q, spec, nil, report.Judging{}, s.reporting(out, j))
		if err != nil {
			return failed(command, err)
		}
		out.Text, out.Chart = text(printed.Text), chart(file, printed.Value)
		return out
	})
}

// reporting is where a job's run reports: its progress to the page, its
// hints and warnings to its outcome.
func (s *Server) reporting(out *Outcome, j *job) report.Reporting {
	return report.Reporting{
		Scenario: s.o.Scenario, Progress: j.progress,
		Hint: func(msg string) { out.warn("hint: %s", msg) },
		Warn: func(msg string) { out.warn("%s", msg) },
	}
}

type benchRequest struct {
	Samples int    `json:"samples"`
	Prefer  string `json:"prefer"`
}

// bench is `tickscope bench --samples N [--prefer power]`: the sweep,
// judged and printed as bench prints it, with its chart; its
// recommendation becomes the Hold form's value.
func (s *Server) bench(req benchRequest) *Outcome {
	defaults := sweep.DefaultPreferences()
	command := fmt.Sprintf("tickscope bench --samples %d", req.Samples)
	if req.Prefer != defaults.Prefer {
		command += " --prefer " + options.Value(req.Prefer)
	}
	command += s.simFlags()
	prefs, err := bench.Preferences(req.Prefer, time.Duration(defaults.BudgetP50), time.Duration(defaults.BudgetP95), time.Duration(defaults.BudgetLateness))
	if err != nil {
		return failed(command, err)
	}
	q, err := s.host.Query()
	if err != nil {
		return failed(command, err)
	}
	b, err := bench.New(s.host, q, &rawfile.File{Command: "bench", Simulated: s.o.Scenario, Query: q}, bench.Options{Samples: req.Samples, Seed: s.o.Seed, Prefs: prefs})
	if err != nil {
		return failed(command, err)
	}
	return s.start("bench", command, b.Total, func(ctx context.Context, j *job) *Outcome {
		out := &Outcome{Warnings: []string{}}
		printed, err := bench.Run(ctx, b, s.o.System, nil, report.Judging{Prefs: prefs}, s.reporting(out, j))
		if err != nil {
			failure := failed(command, err)
			failure.Warnings = out.Warnings
			return failure
		}
		out.Text, out.Chart = text(printed.Text), chart(b.File, printed.Value)
		if setting := recommended(printed.Value); setting != nil {
			s.mu.Lock()
			s.recommended = setting
			s.mu.Unlock()
		}
		return out
	})
}

// recommended is the setting a bench's result recommends that apply can
// hold: a Windows period, or on Linux a cpu_dma_latency (a slack is run's,
// not a hold); nil for none.
func recommended(result any) *timerinfo.Setting {
	switch b := result.(type) {
	case *report.Bench:
		if r := b.Result; r != nil && r.Recommended >= 0 {
			return &timerinfo.Setting{Resolution100ns: r.Rows[r.Recommended].Requested}
		}
	case *report.SlackBench:
		if r := b.Result; r != nil && r.Recommended >= 0 && r.Rows[r.Recommended].Setting.CPUDMALatencyUs != nil {
			return &timerinfo.Setting{CPUDMALatencyUs: r.Rows[r.Recommended].Setting.CPUDMALatencyUs}
		}
	}
	return nil
}
