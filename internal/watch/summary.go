package watch

import (
	"slices"
	"time"

	"github.com/tickscope/tickscope/internal/stats"
	"github.com/tickscope/tickscope/internal/timerstate"
)

// Bucket is one bar of the lateness histogram: wake-ups at most LeNs late
// and later than the bucket before; LeNs 0 is the last, everything later
// than 100 ms (and an early wake-up counts in the first).
type Bucket struct {
	LeNs  int64 `json:"le_ns"`
	Count int64 `json:"count"`
}

// Lateness is the distribution of wake-up lateness over a run: how much
// later than requested each wait of the bursts ended.
type Lateness struct {
	Method  string `json:"method"`
	DelayNs int64  `json:"delay_ns"`
	Waits   int64  `json:"waits"`
	MinNs   int64  `json:"min_ns"`
	MaxNs   int64  `json:"max_ns"`
	MeanNs  int64  `json:"mean_ns"`
	// P50AtMostNs and P99AtMostNs are the upper bounds of the buckets the
	// median and the 99th percentile fall in (0: above 100 ms): the run
	// keeps buckets, not every wait.
	P50AtMostNs int64    `json:"p50_at_most_ns"`
	P99AtMostNs int64    `json:"p99_at_most_ns"`
	Buckets     []Bucket `json:"buckets"`
	sumNs       int64
}

func newLateness(method string, delay time.Duration) *Lateness {
	l := &Lateness{Method: method, DelayNs: int64(delay), Buckets: make([]Bucket, len(stats.LatenessBucketsNs)+1)}
	for i, le := range stats.LatenessBucketsNs {
		l.Buckets[i].LeNs = le
	}
	return l
}

// add counts a burst's lateness (ns).
func (l *Lateness) add(lateness []int64) {
	for _, ns := range lateness {
		if l.Waits == 0 || ns < l.MinNs {
			l.MinNs = ns
		}
		l.MaxNs = max(l.MaxNs, ns)
		l.Waits++
		l.sumNs += ns
		i, _ := slices.BinarySearch(stats.LatenessBucketsNs, ns)
		l.Buckets[i].Count++
	}
	if l.Waits > 0 {
		l.MeanNs = l.sumNs / l.Waits
		l.P50AtMostNs, l.P99AtMostNs = l.atMost(0.50), l.atMost(0.99)
	}
}

// atMost is the upper bound of the bucket holding the nearest-rank q-th
// quantile.
func (l *Lateness) atMost(q float64) int64 {
	rank := int64(q*float64(l.Waits) + 0.999999999)
	var seen int64
	for _, b := range l.Buckets {
		seen += b.Count
		if seen >= rank {
			return b.LeNs
		}
	}
	return 0
}

// PeriodTime is how long the run spent at one period.
type PeriodTime struct {
	// Period is the Windows timer period ("1.0000 ms"), or on Linux the
	// DMA latency in force ("cpu_dma_latency none held").
	Period string `json:"period"`
	Ns     int64  `json:"ns"`
}

// Summary is what a watch run ends with.
type Summary struct {
	DurationNs int64        `json:"duration_ns"`
	Reads      int          `json:"reads"`
	ReadErrors int          `json:"read_errors"`
	Changes    int          `json:"changes"`
	Bursts     int          `json:"bursts"`
	TimeAt     []PeriodTime `json:"time_at"`
	Lateness   *Lateness    `json:"lateness"`
}

// recorder accumulates a run's summary from its reads and bursts.
type recorder struct {
	start, last time.Time
	state       timerstate.State
	read        bool
	timeAt      map[string]time.Duration
	order       []string
	sum         Summary
}

func newRecorder(start time.Time, method string, delay time.Duration) *recorder {
	return &recorder{start: start, last: start, timeAt: map[string]time.Duration{},
		sum: Summary{Lateness: newLateness(method, delay), TimeAt: []PeriodTime{}}}
}

// observe records a read at t and returns what changed since the last.
func (r *recorder) observe(t time.Time, s timerstate.State) []Change {
	r.advance(t)
	r.sum.Reads++
	var changes []Change
	if r.read {
		changes = Changes(r.state, s)
		if len(changes) > 0 {
			r.sum.Changes++
		}
	}
	r.state, r.read = s, true
	return changes
}

// advance counts the time since the last read at the period then read.
func (r *recorder) advance(t time.Time) {
	if r.read && t.After(r.last) {
		key := periodKey(r.state)
		if _, seen := r.timeAt[key]; !seen {
			r.order = append(r.order, key)
		}
		r.timeAt[key] += t.Sub(r.last)
	}
	if t.After(r.last) {
		r.last = t
	}
}

func (r *recorder) burst(lateness []int64) {
	r.sum.Bursts++
	r.sum.Lateness.add(lateness)
}

// summary closes the run at end.
func (r *recorder) summary(end time.Time) *Summary {
	r.advance(end)
	s := r.sum
	s.DurationNs = int64(end.Sub(r.start))
	s.TimeAt = make([]PeriodTime, 0, len(r.order))
	for _, key := range r.order {
		s.TimeAt = append(s.TimeAt, PeriodTime{Period: key, Ns: int64(r.timeAt[key])})
	}
	lateness := *r.sum.Lateness
	lateness.Buckets = slices.Clone(lateness.Buckets)
	s.Lateness = &lateness
	return &s
}
