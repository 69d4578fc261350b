//go:build !linux

package platform

import "github.com/tickscope/tickscope/internal/seam"

// ProgramEvents: tickscope reads no process announcements on this OS (on
// Windows, ETW's kernel process provider would be one), so a hold with
// --while scans.
func (system) ProgramEvents([]string) (seam.ProgramEvents, error) {
	return nil, seam.ErrUnsupported
}

// ListensToProgramEvents: no process listens to what tickscope does not
// read on this OS.
func (system) ListensToProgramEvents(int) (bool, error) {
	return false, seam.ErrUnsupported
}
