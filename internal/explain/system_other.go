//go:build !linux && !windows

package explain

import (
	"context"

	"github.com/tickscope/tickscope/internal/procstat"
)

// NewSystem is this machine's System: on this OS, one that can explain
// nothing yet.
func NewSystem() System { return otherSystem{} }

type otherSystem struct{}

func (otherSystem) CanTrace() (bool, string) { return false, ErrUnsupported.Error() }
func (otherSystem) StartTrace(context.Context, func()) (Trace, error) {
	return nil, ErrUnsupported
}
func (otherSystem) Counters() (procstat.Snapshot, error) { return procstat.Snapshot{}, ErrUnsupported }
func (otherSystem) Thread() (Thread, error)              { return nil, ErrUnsupported }
func supported() error                                   { return ErrUnsupported }
