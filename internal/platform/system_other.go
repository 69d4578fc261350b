//go:build !linux && !windows

package platform

import (
	"context"
	"time"

	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/who"
)

// On this OS tickscope holds nothing: there is no timer-period request
// (system_unix.go), no per-process timer slack it can set, and no startup
// holder.

func (system) ProcessSlack(int) (int64, error)  { return 0, seam.ErrUnsupported }
func (system) SetProcessSlack(int, int64) error { return seam.ErrUnsupported }
func (system) Startup() seam.Startup            { return nil }

// Nothing names the holders of a timer setting here.
func (system) Holders(context.Context) (*who.Snapshot, error) { return nil, seam.ErrUnsupported }
func (system) HolderEvents(context.Context, <-chan struct{}, func(who.Event)) error {
	return seam.ErrUnsupported
}

// SleptFor: tickscope reads no suspended time here.
func (system) SleptFor() (time.Duration, bool) { return 0, false }
