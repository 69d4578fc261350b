package measure

import (
	"context"
	"fmt"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// RunMeasure is measure's run: spec measured on host (q is its query)
// with load running throughout (nil for none; host is the one
// sample.Loaded gave with it), stopped early when ctx ends with a result
// for what was measured, and printed as measure prints it.
func RunMeasure(ctx context.Context, host seam.Host, q *timerinfo.Report, spec sample.Spec, load *sample.Load, judging report.Judging, r report.Reporting) (*rawfile.File, report.Printed, error) {
	if err := load.Start(); err != nil {
		r.End()
		return nil, report.Printed{}, err
	}
	point, err := sample.Measure(ctx, host, spec, r.Progress)
	load.Stop()
	r.End()
	if err != nil {
		return nil, report.Printed{}, fmt.Errorf("measuring %s: %w", spec.Method, err)
	}
	if len(point.Latencies) == 0 {
		return nil, report.Printed{}, sample.ErrNothingMeasured
	}
	if point.Stopped {
		r.Warn(fmt.Sprintf("%sstopped early: the result covers %d of %d samples", report.SimulatedPrefix(r.Scenario), len(point.Latencies), spec.Samples))
	}
	file := &rawfile.File{Command: "measure", Simulated: r.Scenario, Query: q, Method: spec.Method, DelayNs: int64(spec.Delay), Load: load.Record(), Points: []rawfile.Point{*point}}
	if err := r.Keep(file); err != nil {
		return nil, report.Printed{}, err
	}
	return file, report.Print(file, judging), nil
}
