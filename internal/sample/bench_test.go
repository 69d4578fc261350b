package sample_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/platform"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// zeroWaitHost is the real host's clock with a wait that returns at once,
// so that a benchmark sees only what the loop itself costs per sample.
type zeroWaitHost struct{ seam.Host }

func (zeroWaitHost) Methods() []seam.Method {
	return []seam.Method{{Name: "zero", Schedule: seam.Relative}}
}
func (zeroWaitHost) NewWaiter(string, time.Duration) (seam.Waiter, error) {
	return zeroWaiter{}, nil
}
func (zeroWaitHost) Apply(timerinfo.Setting) (timerinfo.Setting, func() error, error) {
	return timerinfo.Setting{}, func() error { return nil }, nil
}
func (zeroWaitHost) PrepareThread() (string, func()) { return "", func() {} }

type zeroWaiter struct{}

func (zeroWaiter) Wait(int64) error { return nil }
func (zeroWaiter) Close() error     { return nil }

// BenchmarkSamplerOverhead reports the loop's cost per sample (ns/sample:
// the target is under 1 µs on Linux) and the memory that 100,000 samples
// hold (bytes/100k-samples: the target is at most 2 MB).
func BenchmarkSamplerOverhead(b *testing.B) {
	h := zeroWaitHost{platform.New()}
	const n = sample.MaxSamples
	spec := sample.Spec{Method: "zero", Delay: 0, Samples: n}
	var before, after runtime.MemStats
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		runtime.ReadMemStats(&before)
		p, err := sample.Measure(context.Background(), h, spec, nil)
		runtime.ReadMemStats(&after)
		if err != nil || len(p.Latencies) != n {
			b.Fatal(err)
		}
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc), "bytes/100k-samples")
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*n), "ns/sample")
}
