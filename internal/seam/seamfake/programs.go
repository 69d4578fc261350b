package seamfake

import (
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/seam"
)

// RunningProcess is a process of the fake OS.
type RunningProcess struct {
	PID int
	// Name is its image name (game.exe) and Path its executable's path.
	Name, Path string
	Started    time.Time
}

// ScanPrograms matches the processes Running lists, comparing names and
// paths without case, as Windows does (the fake's OS is Windows, like the
// model's): a bare name matches Name, a path matches Path.
func (s *System) ScanPrograms(programs []string) (seam.ProgramScanner, error) {
	return &scanner{sys: s, programs: append([]string(nil), programs...)}, nil
}

type scanner struct {
	sys      *System
	programs []string
	closed   bool
}

func (sc *scanner) Scan() ([]seam.ProgramProcess, error) {
	s := sc.sys
	s.mu.Lock()
	s.Scans++
	running, err := s.Running, s.ScanErr
	s.mu.Unlock()
	if sc.closed {
		panic("seamfake: Scan after Close")
	}
	if err != nil {
		return nil, err
	}
	var out []seam.ProgramProcess
	if running == nil {
		return out, nil
	}
	for _, p := range running() {
		for i, program := range sc.programs {
			if strings.ContainsAny(program, `\/`) && strings.EqualFold(strings.ReplaceAll(program, "/", `\`), strings.ReplaceAll(p.Path, "/", `\`)) ||
				!strings.ContainsAny(program, `\/`) && strings.EqualFold(program, p.Name) {
				out = append(out, seam.ProgramProcess{PID: p.PID, Program: i, Started: p.Started})
				break
			}
		}
	}
	return out, nil
}

func (sc *scanner) Close() { sc.closed = true }
