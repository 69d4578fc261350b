package stats

import "math"

// TickFit is the timer tick a sawtooth of overshoots implies.
type TickFit struct {
	// TickNs is the implied tick; 0 when the overshoots show none (waits
	// on high-resolution timers overshoot by a constant).
	TickNs int64 `json:"tick_ns"`
	// Explained is the share (0..1) of the overshoots' variance that the
	// sawtooth explains.
	Explained float64 `json:"explained"`
}

// FitTick finds the tick period T that best explains overshoots of waits
// of the given delays (ns) as a sawtooth: a wait that starts just after a
// tick ends on the first tick at or after its due time, so it overshoots
// by T·⌈d/T⌉ − d plus a constant. It tries every T from minTick to maxTick
// in 1 µs steps and keeps the best least-squares fit; a T is reported only
// if it explains at least 80 % of the variance.
func FitTick(delays, overshoots []float64, minTick, maxTick int64) TickFit {
	n := len(delays)
	if n < 4 || n != len(overshoots) {
		return TickFit{}
	}
	var mean float64
	for _, o := range overshoots {
		mean += o
	}
	mean /= float64(n)
	var total float64
	for _, o := range overshoots {
		total += (o - mean) * (o - mean)
	}
	if total == 0 {
		return TickFit{}
	}
	best, bestErr := int64(0), math.Inf(1)
	model := make([]float64, n)
	for tick := max(minTick, 1000); tick <= maxTick; tick += 1000 {
		t := float64(tick)
		var modelMean float64
		for i, d := range delays {
			model[i] = t*math.Ceil(d/t) - d
			modelMean += model[i]
		}
		modelMean /= float64(n)
		// The constant is fitted: compare deviations from the means.
		var sq float64
		for i := range delays {
			r := (overshoots[i] - mean) - (model[i] - modelMean)
			sq += r * r
		}
		if sq < bestErr {
			best, bestErr = tick, sq
		}
	}
	explained := 1 - bestErr/total
	if explained < 0.8 {
		return TickFit{Explained: max(explained, 0)}
	}
	return TickFit{TickNs: best, Explained: explained}
}
