package report

import "github.com/tickscope/tickscope/internal/rawfile"

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

// End calls Finished, if set.
func (r Reporting) End() {
	if r.Finished != nil {
		r.Finished()
	}
}

// Keep gives f to Samples, if set.
func (r Reporting) Keep(f *rawfile.File) error {
	if r.Samples == nil {
		return nil
	}
	return r.Samples(f)
}
