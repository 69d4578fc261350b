package sim

import (
	"sync"
	"time"

	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// Paced is the model kept in step with the wall clock, for a command that
// waits in real time between its looks at the machine (apply --simulate):
// before each call the virtual clock is moved on to the wall-clock time
// since NewPaced, unless waits have taken it further already. The
// scenario's timed events (another process's request, a program starting)
// then happen as many seconds into the run as the scenario says. Its
// methods may be called from any goroutine, one at a time.
type Paced struct {
	mu    sync.Mutex
	h     *Host
	start time.Time
}

var _ seam.Host = (*Paced)(nil)

// NewPaced paces h from now.
func NewPaced(h *Host) *Paced { return &Paced{h: h, start: time.Now()} }

var _ seam.Simulated = (*Host)(nil)

// RealTime is h paced from now (NewPaced) and the in-memory Windows
// machine a command changes on it (NewWindowsSystem): the model as apply
// --simulate holds on it.
func (h *Host) RealTime() (seam.Host, seam.System) {
	p := NewPaced(h)
	return p, NewWindowsSystem(p)
}

// Model is the model paced.
func (p *Paced) Model() *Host { return p.h }

// catchUp moves the virtual clock on to the wall clock. The caller holds
// mu.
func (p *Paced) catchUp() {
	if lag := int64(time.Since(p.start)) - p.h.now; lag > 0 {
		p.h.Advance(time.Duration(lag))
	}
}

func (p *Paced) Query() (*timerinfo.Report, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.catchUp()
	return p.h.Query()
}

func (p *Paced) Methods() []seam.Method { return p.h.Methods() }

func (p *Paced) Now() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.catchUp()
	return p.h.Now()
}

func (p *Paced) PrepareThread() (string, func()) { return p.h.PrepareThread() }

func (p *Paced) Apply(s timerinfo.Setting) (timerinfo.Setting, func() error, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.catchUp()
	granted, release, err := p.h.Apply(s)
	if err != nil {
		return granted, nil, err
	}
	return granted, func() error {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.catchUp()
		return release()
	}, nil
}

func (p *Paced) Observe() seam.Observation {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.catchUp()
	return p.h.Observe()
}

func (p *Paced) NewWaiter(method string, delay time.Duration) (seam.Waiter, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w, err := p.h.NewWaiter(method, delay)
	if err != nil {
		return nil, err
	}
	return pacedWaiter{p: p, w: w}, nil
}

func (p *Paced) CPUTime() time.Duration { return p.h.CPUTime() }

// WatchStops is the model's, read under the pace's lock.
func (p *Paced) WatchStops() (seam.StopWatch, error) { return pacedWatch{p}, nil }

type pacedWatch struct{ p *Paced }

func (w pacedWatch) Suspended() int64 {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	return w.p.h.suspendedNs
}

func (pacedWatch) Continued() []int64 { return nil }
func (pacedWatch) Close()             {}

// pacedWaiter waits on the model, from the wall-clock time at least:
// the waits of a check run ahead of the wall clock, not behind it.
type pacedWaiter struct {
	p *Paced
	w seam.Waiter
}

func (w pacedWaiter) Wait(deadline int64) error {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	w.p.catchUp()
	return w.w.Wait(deadline)
}

func (w pacedWaiter) Close() error { return w.w.Close() }

// RunningPrograms lists the scenario's processes running now, each with
// when it started by the wall clock.
func (p *Paced) RunningPrograms() []RunningProgram {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.catchUp()
	var out []RunningProgram
	for _, run := range p.h.sc.Programs {
		if run.FromNs <= p.h.now && p.h.now < run.UntilNs {
			out = append(out, RunningProgram{ProgramRun: run, Started: p.start.Add(time.Duration(run.FromNs))})
		}
	}
	return out
}

// RunningProgram is a scenario's process running, with its start time.
type RunningProgram struct {
	ProgramRun
	Started time.Time
}
