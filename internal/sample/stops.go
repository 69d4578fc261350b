package sample

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/seam"
)

// SuspendSlackNs is how far a StopWatch's suspended time may move across a
// wait without counting as a suspend: its two clocks are read one after
// the other. A suspend lasts seconds.
const SuspendSlackNs = int64(time.Millisecond)

// MaxContinueDelay bounds how long after a stop ended its continue
// (SIGCONT) is seen: the signal reaches the watch on another thread,
// through Go's runtime, which takes microseconds and, on a loaded
// machine, milliseconds.
const MaxContinueDelay = time.Second

// A continue marks the wait it is placed on only if the wait was clearly
// longer than the point's others: by StopMinNs at least beyond the median
// wait, and by StopFactor times the median's lateness (the median wait
// less the delay) when that is more. A SIGCONT sent to a process that was
// not stopped is placed on the longest wait of the second before it all
// the same; the guard keeps it from hiding that wait when it was only the
// timer's usual outlier (an extra tick, a preemption of a millisecond or
// two), while a stop that held the wait up by StopMinNs or more, and more
// than twice the usual lateness, is marked.
const (
	StopMinNs  = int64(5 * time.Millisecond)
	StopFactor = 2
)

// stopLog is what one measurement saw of the process not running: the
// end of every wait (warm-up included), on the host's clock, to place
// each continue seen, and the samples whose wait spanned a suspend, which
// the watch tells as the wait ends.
type stopLog struct {
	watch seam.StopWatch
	delay int64
	// begun is when the watch began, start when the first wait began.
	begun, start int64
	// ends[k] is when wait k ended, starts[k] when it began (the clock
	// read its deadline follows).
	ends, starts []int64
	suspendedNs  int64
	suspended    []int // indexes of samples
	// median is the median wait, with the loop's work before it, once
	// computed (clearlyStopped); 0 before.
	median int64
}

// waited records the end of the wait of sample i (negative in the
// warm-up), and whether the machine was suspended across it: the watch's
// suspended time before it began was before.
func (s *stopLog) waited(i int, start, end, before int64) {
	s.ends, s.starts = append(s.ends, end), append(s.starts, start)
	if d := s.watch.Suspended() - before; d > SuspendSlackNs {
		s.suspendedNs += d
		if i >= 0 {
			s.suspended = append(s.suspended, i)
		}
	}
}

// awaitLate waits, at now after the last wait, for the continue of a stop
// during it: the continue is told on another thread, some time after the
// measuring one ran again, and may not have been by the end of the loop.
// It waits only when the last wait was clearly held up (clearlyStopped)
// and no continue was seen since it began, when the watch can wait
// (seam.ContinueAwaiter), and until MaxContinueDelay after the wait ended
// at most: a measurement whose last wait was the timer's ends at once.
func (s *stopLog) awaitLate(ctx context.Context, now int64) {
	a, ok := s.watch.(seam.ContinueAwaiter)
	if !ok || len(s.ends) == 0 || ctx.Err() != nil {
		return
	}
	last := len(s.ends) - 1
	from := s.start
	if last > 0 {
		from = s.ends[last-1]
	}
	if !s.clearlyStopped(s.ends[last] - from) {
		return
	}
	if seen := s.watch.Continued(); len(seen) > 0 && seen[len(seen)-1] >= from {
		return
	}
	if wait := s.ends[last] + int64(MaxContinueDelay) - now; wait > 0 {
		a.AwaitContinue(from, time.Duration(wait))
	}
}

// notRunning is what the measurement of n samples after warmup saw, at
// now, its end: nil when the process ran throughout.
//
// A suspend is placed exactly: its wait saw the suspended time grow. A
// stop is placed from its continue: the stop ended before the continue
// was seen, at most MaxContinueDelay before, inside the span between two
// of the measuring thread's readings of the clock (it cannot read one
// while stopped), so inside one wait and the loop's work before it. The
// stopped span is the longest of those that began before the continue
// was seen and ended within MaxContinueDelay of it; the span before the
// first wait and after the last count too, so that a stop there marks no
// sample. A continue marks its wait only if the wait was clearly longer
// than the others (StopMinNs, StopFactor), and only if the wait itself
// was, not just the loop's work before it: a stop before the clock read
// that begins a wait holds up no sample (its deadline follows that read,
// and a periodic schedule skips the periods it missed), so it is counted
// and marks none. Two continues placed in one wait mark it once.
func (s *stopLog) notRunning(warmup, n int, now int64) (*rawfile.NotRunning, error) {
	continued := s.watch.Continued()
	if len(continued) == 0 && s.suspendedNs == 0 {
		return nil, nil
	}
	marked := slices.Clone(s.suspended)
	// span k is (edge(k-1), edge(k)]: k = -1 the time before the first
	// wait, 0 .. len(ends)-1 the waits, len(ends) the time after the last.
	edge := func(k int) int64 {
		switch {
		case k < 0:
			return s.start
		case k < len(s.ends):
			return s.ends[k]
		case len(s.ends) == 0:
			return max(now, s.start)
		}
		return max(now, s.ends[len(s.ends)-1])
	}
	for _, seen := range continued {
		earliest := seen - int64(MaxContinueDelay)
		// The first span that ends at or after earliest.
		first := sort.Search(len(s.ends), func(k int) bool { return s.ends[k] >= earliest })
		best, longest := -1, edge(-1)-s.begun
		if edge(-1) < earliest {
			longest = -1 // the time before the first wait ended too early
		}
		for k := first; k <= len(s.ends); k++ {
			from := edge(k - 1)
			if from >= seen {
				break
			}
			if d := edge(k) - from; d > longest {
				best, longest = k, d
			}
		}
		if i := best - warmup; best >= 0 && best < len(s.ends) && i >= 0 && i < n && s.clearlyStopped(longest) && s.clearlyStopped(s.ends[best]-s.starts[best]) {
			marked = append(marked, i)
		}
	}
	slices.Sort(marked)
	marked = slices.Compact(marked)
	if len(marked) > rawfile.MaxNotRunning {
		return nil, fmt.Errorf("%d samples were taken while the process was not running (stopped or suspended %d times): over %d, nothing is left to judge", len(marked), len(continued)+len(s.suspended), rawfile.MaxNotRunning)
	}
	nr := &rawfile.NotRunning{Continued: len(continued), SuspendedNs: s.suspendedNs}
	if len(marked) > 0 {
		nr.Samples = marked
	}
	return nr, nil
}

// clearlyStopped tells whether a wait (with the loop's work before it)
// that lasted d is clearly longer than the measurement's median one: by
// StopMinNs, and by StopFactor times the median lateness.
func (s *stopLog) clearlyStopped(d int64) bool {
	if s.median == 0 && len(s.ends) > 0 {
		spans := make([]int64, len(s.ends))
		for k, end := range s.ends {
			from := s.start
			if k > 0 {
				from = s.ends[k-1]
			}
			spans[k] = end - from
		}
		slices.Sort(spans)
		s.median = max(spans[len(spans)/2], 1)
	}
	return d-s.median >= max(StopMinNs, StopFactor*max(s.median-s.delay, 0))
}
