package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/machine"
	"github.com/tickscope/tickscope/internal/stats"
)

// BenchmarkLoop keeps 1 kHz and 500 Hz loops for b.N ticks with each way
// loop-bench compares (loops.go) and reports lateness p50 and p99 (ns),
// early ticks and CPU (% of one CPU). It is the go test -bench form of
// loop-bench:
//
//	go test -run XXX -bench Loop -benchtime 5000x ./tools/loop-bench
func BenchmarkLoop(b *testing.B) {
	host := machine.Host()
	for _, hz := range []int{1000, 500} {
		period := time.Second / time.Duration(hz)
		for _, name := range loopNames {
			if !loopAvailable(host, name) {
				continue
			}
			b.Run(fmt.Sprintf("%dHz/%s", hz, name), func(b *testing.B) {
				r, err := runLoop(context.Background(), host, name, period, b.N)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(stats.Percentile(r.Lateness, 50)), "p50-ns")
				b.ReportMetric(float64(stats.Percentile(r.Lateness, 99)), "p99-ns")
				b.ReportMetric(float64(r.Early), "early")
				b.ReportMetric(100*r.CPU, "cpu-%")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
