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

func (e *SpecError) Error() string {
	what := e.Spec.Method + " " + e.Spec.Delay.String()
	if !e.Spec.Setting.IsZero() {
		what += " with " + e.Spec.Setting.String()
	}
	return what + ": " + e.Err.Error()
}

func (e *SpecError) Unwrap() error { return e.Err }

// Series is the outer measurement loop: compare, curve, the bench and
// loop-bench take their points through it. It measures specs one after
// another through Measure, each into a point of its own, and tells done
// each point with its index in specs as soon as it is measured (also a
// point that ctx stopped before its first sample). What done changes in the
// point is kept: compare labels each point with its method there, and the
// bench merges each chunk into the setting it belongs to.
//
// It ends at the first point that ctx stopped and keeps only points with
// at least one sample, so points[i] is always specs[i]'s (the last may be
// partial: Stopped). It returns ErrNothingMeasured when nothing was
// measured. A failure returns the points measured before it with a
// *SpecError.
func Series(ctx context.Context, h seam.Host, specs []Spec, done func(i int, p *rawfile.Point)) ([]rawfile.Point, error) {
	var points []rawfile.Point
	for i, spec := range specs {
		p, err := Measure(ctx, h, spec, nil)
		if err != nil {
			return points, &SpecError{Index: i, Spec: spec, Err: err}
		}
		if done != nil {
			done(i, p)
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
