package sim

import (
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

func (sc *scanner) Close() {
	if !sc.closed {
		sc.sys.mu.Lock()
		sc.sys.OpenScanners--
		sc.sys.mu.Unlock()
	}
	sc.closed = true
}
