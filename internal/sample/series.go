package sample

import (
	"context"
	"errors"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/seam"
)

// ErrNothingMeasured is the one way to say that a run was stopped (ESC,
// Ctrl+C) before it measured anything.
var ErrNothingMeasured = errors.New("stopped before anything was measured")

// SpecError is a failed measurement of one spec of a Series.
type SpecError struct {
	Index int
	Spec  Spec
	Err   error
}

func (e *SpecError) Error() string { return e.Spec.Method + " " + e.Spec.Delay.String() + ": " + e.Err.Error() }
func (e *SpecError) Unwrap() error { return e.Err }

// Series is the outer measurement loop: it measures specs one after another
// through Measure, each into a point of its own, and tells done after each.
// It ends at the first point that ctx stopped, keeps only points with at
// least one sample (the last may be partial: Stopped), and returns
// ErrNothingMeasured when there are none. A failure returns the points
// measured before it with a *SpecError.
func Series(ctx context.Context, h seam.Host, specs []Spec, done func(finished int)) ([]rawfile.Point, error) {
	var points []rawfile.Point
	for i, spec := range specs {
		p, err := Measure(ctx, h, spec, nil)
		if err != nil {
			return points, &SpecError{Index: i, Spec: spec, Err: err}
		}
		if done != nil {
			done(i + 1)
		}
		if len(p.Latencies) > 0 {
			points = append(points, *p)
		}
		if p.Stopped {
			break
		}
	}
	if len(points) == 0 {
		return nil, ErrNothingMeasured
	}
	return points, nil
}
