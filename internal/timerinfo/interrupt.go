package timerinfo

import (
	"cmp"
	"slices"
)

// InterruptTick is the clock interrupt period running now, measured from
// the steps of Windows' interrupt time: the count advances by the length
// of a clock tick at each clock interrupt ("QueryUnbiasedInterruptTime
// function", Microsoft Learn), so read in a tight loop it holds a value
// and then jumps by exactly one period.
type InterruptTick struct {
	// Source says what was read, and for how long.
	Source string `json:"source"`
	// Reads is how many readings were taken; Steps the distinct nonzero
	// increments between consecutive readings, most frequent first.
	Reads int    `json:"reads"`
	Steps []Step `json:"steps"`
	// Period100ns is the period the steps show (the most frequent step,
	// when it and its neighbours within 0.1% are most of the steps), 0
	// when the readings are not tick-quantised (Quantised false: the value
	// changed on a quarter of the reads or more, or by irregular steps) or
	// showed no step.
	Period100ns uint32 `json:"period_100ns"`
	Quantised   bool   `json:"quantised"`
}

// Step is one increment of the interrupt time and how often it was seen.
type Step struct {
	Size100ns uint64 `json:"size_100ns"`
	Count     int    `json:"count"`
}

// tickRepeats is how many readings, on average, must repeat a value for
// each change for the readings to count as tick-quantised: a clock that
// advances continuously changes on nearly every read of a tight loop, one
// updated only at each interrupt (0.5 to 15.6 ms) holds its value for
// thousands of reads.
const tickRepeats = 4

// AnalyseInterruptTime finds the clock interrupt period in reads readings
// of the interrupt time (100 ns units) taken in a tight loop: values are
// the first reading and then each one that differed from the one before,
// in order (a loop of 100 ms reads millions of times; only its changes
// are kept).
func AnalyseInterruptTime(source string, reads int, values []uint64) InterruptTick {
	tick := InterruptTick{Source: source, Reads: reads, Steps: []Step{}}
	counts := map[uint64]int{}
	changes := 0
	for i := 1; i < len(values); i++ {
		if values[i] > values[i-1] {
			counts[values[i]-values[i-1]]++
			changes++
		}
	}
	for size, n := range counts {
		tick.Steps = append(tick.Steps, Step{Size100ns: size, Count: n})
	}
	slices.SortFunc(tick.Steps, func(a, b Step) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Size100ns, b.Size100ns))
	})
	if changes == 0 || changes*tickRepeats > reads-1 {
		return tick
	}
	// A tick is one size: the most frequent step, give or take the 100 ns
	// rounding of a period that is not a whole number of them (1024 Hz
	// alternates 9765 and 9766), must be most of the steps. Under Wine
	// the count moves on at irregular moments by irregular amounts.
	mode := tick.Steps[0].Size100ns
	tolerance := max(1, mode/1000)
	same := 0
	for _, s := range tick.Steps {
		if s.Size100ns+tolerance >= mode && s.Size100ns <= mode+tolerance {
			same += s.Count
		}
	}
	if same*2 <= changes {
		return tick
	}
	tick.Quantised = true
	tick.Period100ns = uint32(min(mode, uint64(^uint32(0))))
	return tick
}
