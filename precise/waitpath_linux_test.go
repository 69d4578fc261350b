package precise

import (
	"runtime"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tickscope/tickscope/internal/nativewait"
)

// BenchmarkWaitPath is where a wait's last fraction of a µs goes: 1 kHz
// loops, interleaved in rounds of 200 ticks on one locked thread with 1 ns
// of timer slack, each reporting its median and 10th-percentile lateness
// (ns) after the deadline:
//
//   - bare: the seam's hybrid loop (clock_nanosleep to 125 µs before the
//     deadline, spin, read the clock), the floor;
//   - sleep: the package's wait with the default policy, as Sleep makes it;
//   - ticker: Ticker.Wait with the default policy, timed against the tick
//     it waits for.
//
// What separates them is what runs between the spin's last clock read
// and the caller's: returns, locks, and whatever memory the native sleep
// let go cold.
//
//	go test ./precise -run XXX -bench WaitPath -benchtime 10x
func BenchmarkWaitPath(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0); err != nil {
		b.Skipf("PR_SET_TIMERSLACK: %v", err)
	}
	const period, ticks = int64(time.Millisecond), 200
	margin := int64(nativewait.SpinSleepMargin)
	// next is the first deadline after the clock's reading: a loop that
	// fell behind skips what it missed, as the measurement loop does.
	next := func(d int64) int64 {
		for d += period; d <= now(); d += period {
		}
		return d
	}
	loops := []struct {
		name string
		run  func() []int64
	}{
		{"bare", func() []int64 {
			late := make([]int64, 0, ticks)
			for d := next(now()); len(late) < ticks; d = next(d) {
				nativewait.SleepUntil(d - margin)
				for now() < d {
				}
				late = append(late, now()-d)
			}
			return late
		}},
		{"sleep", func() []int64 {
			late := make([]int64, 0, ticks)
			for d := next(now()); len(late) < ticks; d = next(d) {
				sleepUntil(cal, d, nil)
				late = append(late, now()-d)
			}
			return late
		}},
		{"ticker", func() []int64 {
			late := make([]int64, 0, ticks)
			tk := NewTicker(time.Duration(period))
			defer tk.Stop()
			for len(late) < ticks {
				tk.mu.Lock()
				d := tk.next
				tk.mu.Unlock()
				tk.Wait()
				late = append(late, now()-d)
			}
			return late
		}},
	}
	all := make([][]int64, len(loops))
	for b.Loop() {
		for i, l := range loops {
			all[i] = append(all[i], l.run()...)
		}
	}
	for i, l := range loops {
		slices.Sort(all[i])
		b.ReportMetric(float64(all[i][len(all[i])/2]), l.name+"-p50-ns")
		b.ReportMetric(float64(all[i][len(all[i])/10]), l.name+"-p10-ns")
	}
	b.ReportMetric(0, "ns/op")
}
