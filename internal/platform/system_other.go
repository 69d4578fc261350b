//go:build !linux && !windows

package platform

import "github.com/tickscope/tickscope/internal/seam"

// On this OS tickscope holds nothing: there is no timer-period request
// (system_unix.go), no per-process timer slack it can set, and no startup
// holder.

func (system) ProcessSlack(int) (int64, error)  { return 0, seam.ErrUnsupported }
func (system) SetProcessSlack(int, int64) error { return seam.ErrUnsupported }
func (system) Startup() seam.Startup            { return nil }
