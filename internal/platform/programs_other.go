//go:build !linux && !windows

package platform

import "github.com/tickscope/tickscope/internal/seam"

// ScanPrograms: tickscope holds no setting on this OS, so it watches for
// no program either.
func (system) ScanPrograms([]string) (seam.ProgramScanner, error) {
	return nil, seam.ErrUnsupported
}
