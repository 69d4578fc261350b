package ui

import (
	"sync"
	"time"

	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// simulatedSystem is the System ui --simulate runs on, with the model of
// Windows timers: an in-memory Windows machine that is not elevated and has
// Task Scheduler (sim.System), so that nothing the page does reaches this
// machine.
func simulatedSystem() System { return sim.NewWindowsSystem(nil) }

// serialHost makes a host that is not safe for concurrent use (the model,
// whose virtual clock every call moves or reads) safe for the page, which
// reads the timer state every second while a measurement or a hold runs
// on it: one call at a time. It also paces the model: each wait returns
// once the wall clock has caught up with the model's virtual one, so that
// a bench on the model takes as long as it would on the machine modelled,
// its progress moves as it would there, and Stop lands inside a chunk of
// waits, as ESC does in a terminal.
type serialHost struct {
	mu *sync.Mutex
	h  seam.Host
	p  *pacing
}

// sleptNs is the model's virtual time spent waiting (sim.Host).
type sleptNs interface{ SleptNs() int64 }

func newSerialHost(h seam.Host) serialHost {
	return serialHost{mu: &sync.Mutex{}, h: h, p: &pacing{}}
}

// pacing relates the model's virtual waiting time to the wall clock.
type pacing struct {
	wall    time.Time
	virtual int64
}

// maxLag is how far the wall clock may run ahead of the model's waits (the
// page idle, or computing) before pacing starts again from now, rather
// than letting the model run unpaced until it has caught up.
const maxLag = 50 * time.Millisecond

// ahead is how long the model's waits are ahead of the wall clock, after
// virtual ns of waiting in all.
func (p *pacing) ahead(virtual int64) time.Duration {
	now := time.Now()
	lead := time.Duration(virtual-p.virtual) - now.Sub(p.wall)
	if p.wall.IsZero() || lead < -maxLag {
		p.wall, p.virtual = now, virtual
		return 0
	}
	return lead
}

func (s serialHost) Query() (*timerinfo.Report, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.h.Query()
}

func (s serialHost) Methods() []seam.Method { return s.h.Methods() }

func (s serialHost) Now() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.h.Now()
}

func (s serialHost) PrepareThread() (string, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.h.PrepareThread()
}

func (s serialHost) Apply(setting timerinfo.Setting) (timerinfo.Setting, func() error, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	granted, release, err := s.h.Apply(setting)
	if err != nil {
		return granted, nil, err
	}
	return granted, func() error {
		s.mu.Lock()
		defer s.mu.Unlock()
		return release()
	}, nil
}

func (s serialHost) Observe() seam.Observation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.h.Observe()
}

func (s serialHost) NewWaiter(method string, delay time.Duration) (seam.Waiter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, err := s.h.NewWaiter(method, delay)
	if err != nil {
		return nil, err
	}
	return serialWaiter{s: s, w: w}, nil
}

func (s serialHost) CPUTime() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.h.CPUTime()
}

type serialWaiter struct {
	s serialHost
	w seam.Waiter
}

// Wait waits on the model, then sleeps while the model is ahead of the
// wall clock (without the lock, so the page reads the state meanwhile).
func (w serialWaiter) Wait(deadline int64) error {
	w.s.mu.Lock()
	err := w.w.Wait(deadline)
	var ahead time.Duration
	if m, ok := w.s.h.(sleptNs); ok {
		ahead = w.s.p.ahead(m.SleptNs())
	}
	w.s.mu.Unlock()
	if ahead > 0 {
		time.Sleep(ahead)
	}
	return err
}

func (w serialWaiter) Close() error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.w.Close()
}
