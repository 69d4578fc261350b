package precise_test

import (
	"slices"
	"testing"
	"time"

	"github.com/tickscope/tickscope/precise"
)

// BenchmarkLoop1kHz keeps a 1 kHz loop for b.N ticks with each way and
// reports the lateness percentiles (p50-ns, p99-ns) and early ticks. It is
// the go test -bench form of tools/loop-bench:
//
//	go test -run XXX -bench Loop1kHz -benchtime 5000x ./precise
func BenchmarkLoop1kHz(b *testing.B) {
	const period = time.Millisecond
	report := func(b *testing.B, late []time.Duration) {
		slices.Sort(late)
		early := 0
		for _, l := range late {
			if l < 0 {
				early++
			}
		}
		b.ReportMetric(float64(late[len(late)/2]), "p50-ns")
		b.ReportMetric(float64(late[(len(late)*99+99)/100-1]), "p99-ns")
		b.ReportMetric(float64(early), "early")
	}
	b.Run("time.Sleep", func(b *testing.B) {
		late := make([]time.Duration, 0, b.N)
		next := time.Now()
		for b.Loop() {
			next = next.Add(period)
			time.Sleep(time.Until(next))
			late = append(late, time.Since(next))
		}
		report(b, late)
	})
	b.Run("precise.Ticker", func(b *testing.B) {
		late := make([]time.Duration, 0, b.N)
		t := precise.NewTicker(period)
		defer t.Stop()
		for b.Loop() {
			due := time.Now().Add(t.Due())
			t.Wait()
			late = append(late, time.Since(due))
		}
		report(b, late)
	})
}
