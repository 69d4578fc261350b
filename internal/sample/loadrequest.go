package sample

import (
	"errors"
	"runtime"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/seam"
)

// LoadRequest is --load: measure, bench, compare and explain keep that
// many busy threads (CPUBound) running beside the measurement on this
// machine.
type LoadRequest struct {
	Threads int
	// Given says --load was given (--load 0 too).
	Given bool
}

// Host checks --load (options.Load: at most options.MaxLoadPerCPU a CPU,
// none on the model named by scenario) and returns host as measurements
// under the load see it, with the load, not yet started (nil for none).
func (l *LoadRequest) Host(host seam.Host, scenario string) (seam.Host, *Load, error) {
	if err := options.Load(l.Threads, runtime.NumCPU(), l.Given, scenario); err != nil {
		return nil, nil, err
	}
	loaded, load, err := Loaded(host, l.Threads, CPUBound)
	if errors.Is(err, ErrNoThreadClock) {
		return nil, nil, options.BadFlag("load", l.Threads, "not offered on %s: %v", runtime.GOOS, err)
	}
	return loaded, load, err
}
