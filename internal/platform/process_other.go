//go:build !linux && !windows

package platform

import (
	"os/exec"

	"github.com/tickscope/tickscope/internal/seam"
)

func (system) DescribeProcess(int) (seam.Process, error) { return seam.Process{}, seam.ErrUnsupported }

// StartTied starts cmd untied: this OS has no parent-death signal
// tickscope uses (run has no setting to hold here, so it starts no program
// on this OS).
func (system) StartTied(cmd *exec.Cmd) (func(), error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return func() {}, &seam.NotTiedError{Err: seam.ErrUnsupported}
}
