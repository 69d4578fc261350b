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

// Reporting is where a measure's or a bench's run reports as it goes: the
// command line's progress bar and warnings, or the page's job.
type Reporting struct {
	// Scenario is the model's scenario ("" on this machine): warnings
	// computed on the model are labelled SIMULATED.
	Scenario string
	// Hint and Warn are given each hint and warning, once.
	Hint, Warn func(msg string)
	// Progress is given the waits done and the estimated total; Finished
	// (if set) is called once measuring has ended, before any more is
	// reported.
	Progress func(done, total int)
	Finished func()
	// Samples (if set) is given every sample before they are judged,
	// whatever the judgement: the raw file, which a sweep where every
	// candidate was affected makes the evidence to share.
	Samples func(*rawfile.File) error
}

func (r Reporting) finished() {
	if r.Finished != nil {
		r.Finished()
	}
}

func (r Reporting) samples(f *rawfile.File) error {
	if r.Samples == nil {
		return nil
	}
	return r.Samples(f)
}

// RunMeasure is measure's run: spec measured on host (q is its query)
// with load running throughout (nil for none; host is the one
// sample.Loaded gave with it), stopped early when ctx ends with a result
// for what was measured, and printed as measure prints it.
func RunMeasure(ctx context.Context, host seam.Host, q *timerinfo.Report, spec sample.Spec, load *sample.Load, judging report.Judging, r Reporting) (*rawfile.File, report.Printed, error) {
	if err := load.Start(); err != nil {
		r.finished()
		return nil, report.Printed{}, err
	}
	point, err := sample.Measure(ctx, host, spec, r.Progress)
	load.Stop()
	r.finished()
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
	if err := r.samples(file); err != nil {
		return nil, report.Printed{}, err
	}
	return file, report.Print(file, judging), nil
}

// RunBench is bench's run of b: its hints and warnings, the bench lock on
// this machine (sys; none on the model: two benches would hold each
// other's requests), the sweep with load running throughout (nil for
// none; b measures on the host sample.Loaded gave with it), stopped early
// when ctx ends, and the judgement printed as bench prints it; a sweep
// with nothing usable is its error.
func RunBench(ctx context.Context, b *Bench, sys seam.System, load *sample.Load, judging report.Judging, r Reporting) (report.Printed, error) {
	for _, hint := range b.Hints {
		r.Hint(hint)
	}
	for _, warning := range b.Warnings {
		r.Warn(report.SimulatedPrefix(r.Scenario) + warning)
	}
	if r.Scenario == "" {
		release, err := sys.Lock(seam.BenchLock)
		if err != nil {
			r.finished()
			return report.Printed{}, err
		}
		defer release()
	}
	if err := load.Start(); err != nil {
		r.finished()
		return report.Printed{}, err
	}
	b.File.Load = load.Record()
	err := b.Run(ctx, r.Progress)
	load.Stop()
	r.finished()
	if err != nil {
		return report.Printed{}, err
	}
	if err := r.samples(b.File); err != nil {
		return report.Printed{}, err
	}
	printed := report.Print(b.File, judging)
	if printed.Unusable != nil {
		return printed, printed.Unusable
	}
	if printed.Partial {
		r.Warn(report.SimulatedPrefix(r.Scenario) + "stopped early: the recommendation covers the settings measured so far")
	}
	return printed, nil
}
