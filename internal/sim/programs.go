package sim

import (
	"slices"
	"sync"
	"time"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/seam"
)

// RunningProcess is a process of the fake OS.
type RunningProcess struct {
	PID int
	// Name is its short name as the OS shows it for every process
	// (Windows' image name, game.exe; Linux's comm, its base name cut to
	// 15 bytes) and Path its executable's path (Linux: links resolved).
	Name, Path string
	Started    time.Time
	// UID is its real user id where the fake's OS is Linux
	// (LinuxPrograms); on Windows the scanner says none (-1). SID is its
	// user's security identifier where the fake's OS is Windows.
	UID int
	SID string
	// PathErr, when set, is why its path cannot be read (another user's
	// process): a program that needs its path does not match it, and the
	// scanner reports it once (Unreadable).
	PathErr error
}

// ScanPrograms matches the processes Running lists by options.Program's
// rules for the fake's OS: Windows' (the model's OS) unless LinuxPrograms
// is set, with Links as the links a Linux path may be.
func (s *System) ScanPrograms(programs []string) (seam.ProgramScanner, error) {
	s.mu.Lock()
	linux, links := s.LinuxPrograms, s.Links
	s.mu.Unlock()
	var resolve func(string) (string, error)
	if linux {
		resolve = func(path string) (string, error) {
			if target, ok := links[path]; ok {
				return target, nil
			}
			return path, nil
		}
	}
	s.mu.Lock()
	s.OpenScanners++
	s.mu.Unlock()
	sc := &scanner{sys: s, told: map[int]bool{}, linux: linux}
	for _, program := range programs {
		sc.programs = append(sc.programs, options.NewProgram(program, !linux, resolve))
	}
	return sc, nil
}

// SetScanErr sets ScanErr while a hold may be scanning, as a test does
// between scans it does not wait for.
func (s *System) SetScanErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ScanErr = err
}

type scanner struct {
	sys        *System
	programs   []options.Program
	told       map[int]bool
	unreadable []seam.UnreadableProcess
	closed     bool
	linux      bool
}

func (sc *scanner) Scan() ([]seam.ProgramProcess, error) {
	s := sc.sys
	s.mu.Lock()
	s.Scans++
	running, err := s.Running, s.ScanErr
	s.mu.Unlock()
	if sc.closed {
		panic("sim: Scan after Close")
	}
	sc.unreadable = nil
	if err != nil {
		return nil, err
	}
	var out []seam.ProgramProcess
	if running == nil {
		return out, nil
	}
	for _, p := range running() {
		path := p.Path
		if p.PathErr != nil {
			path = ""
		}
		for i, program := range sc.programs {
			if program.Matches(p.Name, path) {
				uid, sid := -1, p.SID
				if sc.linux {
					uid, sid = p.UID, ""
				}
				out = append(out, seam.ProgramProcess{PID: p.PID, Program: i, Started: p.Started, UID: uid, SID: sid})
				break
			}
			if p.PathErr != nil && program.ShortNameMatches(p.Name) && program.NeedsPath() {
				if !sc.told[p.PID] {
					sc.told[p.PID] = true
					sc.unreadable = append(sc.unreadable, seam.UnreadableProcess{PID: p.PID, Program: i, Err: p.PathErr})
				}
				break
			}
		}
	}
	return out, nil
}

func (sc *scanner) Unreadable() []seam.UnreadableProcess { return sc.unreadable }

// Hint records h (the fake reads every process at every scan).
func (sc *scanner) Hint(h seam.ScanHint) {
	sc.sys.mu.Lock()
	defer sc.sys.mu.Unlock()
	h.PIDs = slices.Clone(h.PIDs)
	sc.sys.Hints = append(sc.sys.Hints, h)
}

// HintsSoFar is a copy of Hints, read while scanners may add to it.
func (s *System) HintsSoFar() []seam.ScanHint {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.Hints)
}

// ProgramEvents returns ProcessEvents, or fails as the fake's OS does
// where it has none (ProcessEventsErr, else ErrUnsupported); what it
// announces is the test's, whatever the programs.
func (s *System) ProgramEvents([]string) (seam.ProgramEvents, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.ProcessEvents != nil:
		return s.ProcessEvents, nil
	case s.ProcessEventsErr != nil:
		return nil, s.ProcessEventsErr
	}
	return nil, seam.ErrUnsupported
}

// ListensToProgramEvents answers from Listening (ErrUnsupported while it
// is nil, as where the OS has no event source).
func (s *System) ListensToProgramEvents(pid int) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Listening == nil {
		return false, seam.ErrUnsupported
	}
	return s.Listening[pid], nil
}

// ProgramEvents is a fake source of process announcements: a test calls
// Announce, and the hold takes what it gathered.
type ProgramEvents struct {
	mu      sync.Mutex
	ready   chan struct{}
	pending seam.ProcessChanges
	takes   chan seam.ProcessChanges
	tracks  chan []int
	tracked [][]int
	closed  bool
}

// NewProgramEvents makes a fake source.
func NewProgramEvents() *ProgramEvents {
	return &ProgramEvents{ready: make(chan struct{}, 1), takes: make(chan seam.ProcessChanges, 100), tracks: make(chan []int, 100)}
}

// Announce gathers c (its lists appended, Lost and Err kept once set) and
// says it is ready.
func (e *ProgramEvents) Announce(c seam.ProcessChanges) {
	e.mu.Lock()
	e.pending.Ran = append(e.pending.Ran, c.Ran...)
	e.pending.Exited = append(e.pending.Exited, c.Exited...)
	e.pending.Lost = e.pending.Lost || c.Lost
	if c.Err != nil {
		e.pending.Err = c.Err
	}
	e.mu.Unlock()
	select {
	case e.ready <- struct{}{}:
	default:
	}
}

func (e *ProgramEvents) Ready() <-chan struct{} { return e.ready }

// Take returns what was gathered, and tells Taken of it; Ready tells of
// every Announce, whatever wake says.
func (e *ProgramEvents) Take(bool) seam.ProcessChanges {
	e.mu.Lock()
	c := e.pending
	e.pending = seam.ProcessChanges{}
	e.mu.Unlock()
	select {
	case e.takes <- c:
	default:
	}
	return c
}

// Track records pids as Tracked, and tells Tracks of them.
func (e *ProgramEvents) Track(pids []int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.tracked = append(e.tracked, slices.Clone(pids))
	select {
	case e.tracks <- slices.Clone(pids):
	default:
	}
}

// Tracks receives each Track's pids (up to 100 not received: the first
// ones; a Track past them is not sent), so that a test waits for a scan
// to have ended.
func (e *ProgramEvents) Tracks() <-chan []int { return e.tracks }

// Tracked is what Track was given, call by call.
func (e *ProgramEvents) Tracked() [][]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.tracked)
}

// Taken receives each Take's changes (up to 100 not received: the first
// ones; a Take past them is not sent), so that a test waits for the hold
// to have taken an announcement.
func (e *ProgramEvents) Taken() <-chan seam.ProcessChanges { return e.takes }

func (e *ProgramEvents) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
}

// Closed reports whether Close was called.
func (e *ProgramEvents) Closed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

func (sc *scanner) Close() {
	if !sc.closed {
		sc.sys.mu.Lock()
		sc.sys.OpenScanners--
		sc.sys.mu.Unlock()
	}
	sc.closed = true
}
