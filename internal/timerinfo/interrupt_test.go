package timerinfo

import (
	"slices"
	"testing"
)

// ticks are n readings of a clock that steps by period every hold reads.
func ticks(start uint64, period uint64, hold, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = start + uint64(i/hold)*period
	}
	return out
}

func TestAnalyseInterruptTime(t *testing.T) {
	continuous := make([]uint64, 1000)
	for i := range continuous {
		continuous[i] = 5000 + uint64(i)*3 + uint64(i%2) // 3 or 4 or 2 each read
	}
	for _, tc := range []struct {
		name      string
		readings  []uint64
		period    uint32
		quantised bool
		steps     []Step
	}{
		{"15.6 ms ticks", ticks(1e9, 156250, 5000, 20001), 156250, true, []Step{{156250, 4}}},
		{"1 ms ticks", ticks(7, 10000, 300, 30000), 10000, true, []Step{{10000, 99}}},
		// 0.9766 ms (1024 Hz) alternates 9765 and 9766 in 100 ns units;
		// the most frequent is the period.
		{"1024 Hz", []uint64{0, 0, 0, 0, 9766, 9766, 9766, 9766, 19531, 19531, 19531, 19531, 29297, 29297, 29297, 29297}, 9766, true, []Step{{9766, 2}, {9765, 1}}},
		{"continuous (Wine)", continuous, 0, false, nil},
		// Wine: 65 changes in 330000 reads, each step its own size.
		{"irregular steps (Wine)", []uint64{0, 0, 0, 0, 0, 0, 0, 0, 0, 281, 281, 281, 281, 281, 281, 281, 281, 604, 604, 604, 604, 604, 604, 604, 988, 988, 988, 988, 988, 988, 988, 988, 988, 1433}, 0, false, []Step{{281, 1}, {323, 1}, {384, 1}, {445, 1}}},
		{"no step seen", []uint64{42, 42, 42}, 0, false, []Step{}},
		{"nothing read", nil, 0, false, []Step{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var values []uint64
			for i, r := range tc.readings {
				if i == 0 || r != tc.readings[i-1] {
					values = append(values, r)
				}
			}
			got := AnalyseInterruptTime("test", len(tc.readings), values)
			if got.Period100ns != tc.period || got.Quantised != tc.quantised || got.Reads != len(tc.readings) {
				t.Errorf("got %+v, want period %d quantised %v", got, tc.period, tc.quantised)
			}
			if tc.steps != nil && !slices.Equal(got.Steps, tc.steps) {
				t.Errorf("steps %v, want %v", got.Steps, tc.steps)
			}
		})
	}
}
