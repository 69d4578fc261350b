// Command loop-bench runs periodic loops at 1 kHz and 500 Hz with each way
// a Go program can keep a period, side by side in one run, and reports the
// lateness of every tick (p50, p99, max, and whether any was early) and the
// CPU each way costs. It is the check of package precise against the
// targets in BENCHMARKS.md.
//
//	go run ./tools/loop-bench [-seconds 5]
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/tickscope/tickscope/internal/platform"
	"github.com/tickscope/tickscope/precise"
)

// host gives the high-resolution clock every lateness is measured on (Go's
// own clock on Windows follows the timer interrupt) and the process's CPU
// time.
var (
	host    = platform.New()
	now     = host.Now
	cpuTime = host.CPUTime
)

// method keeps a loop on a period and returns each tick's lateness.
type method struct {
	name string
	run  func(period time.Duration, ticks int) []time.Duration
}

func main() {
	seconds := flag.Float64("seconds", 5, "how long each loop runs")
	flag.Parse()
	fmt.Printf("%-22s %6s %10s %10s %10s %6s %7s\n", "method", "rate", "p50", "p99", "max", "early", "CPU")
	for _, hz := range []int{1000, 500} {
		period := time.Second / time.Duration(hz)
		ticks := int(*seconds * float64(hz))
		for _, m := range methods() {
			cpuBefore, wallBefore := cpuTime(), time.Now()
			late := m.run(period, ticks)
			cpu := float64(cpuTime()-cpuBefore) / float64(time.Since(wallBefore))
			slices.Sort(late)
			early := 0
			for _, l := range late {
				if l < 0 {
					early++
				}
			}
			fmt.Printf("%-22s %4dHz %10s %10s %10s %6d %6.1f%%\n", m.name, hz, fmtD(pct(late, 50)), fmtD(pct(late, 99)), fmtD(late[len(late)-1]), early, 100*cpu)
		}
	}
	s := precise.Stats()
	fmt.Printf("precise: margin %v at the end, %.1f %% of its waiting spent spinning\n", s.Margin, 100*s.SpinShare)
}

func pct(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p+99)/100 - 1
	return sorted[max(i, 0)]
}

func fmtD(d time.Duration) string {
	if d < 10*time.Microsecond && d > -10*time.Microsecond {
		return fmt.Sprintf("%.2fµs", float64(d)/1e3)
	}
	return d.Round(100 * time.Nanosecond).String()
}

// common methods, on every OS.
func commonMethods() []method {
	return []method{
		{"time.Sleep", func(period time.Duration, ticks int) []time.Duration {
			late := make([]time.Duration, 0, ticks)
			next := now()
			for range ticks {
				next += int64(period)
				time.Sleep(time.Duration(next - now()))
				late = append(late, time.Duration(now()-next))
			}
			return late
		}},
		{"time.Ticker", func(period time.Duration, ticks int) []time.Duration {
			late := make([]time.Duration, 0, ticks)
			start := now()
			t := time.NewTicker(period)
			defer t.Stop()
			// time.Ticker drops ticks it cannot deliver: each tick is
			// measured against the last one due, and the drops are lost.
			for range ticks {
				<-t.C
				late = append(late, time.Duration((now()-start)%int64(period)))
			}
			return late
		}},
		{"precise.Ticker", func(period time.Duration, ticks int) []time.Duration {
			late := make([]time.Duration, 0, ticks)
			t := precise.NewTicker(period)
			defer t.Stop()
			for range ticks {
				due := now() + int64(t.Due())
				t.Wait()
				late = append(late, time.Duration(now()-due))
			}
			return late
		}},
		{"spin", func(period time.Duration, ticks int) []time.Duration {
			late := make([]time.Duration, 0, ticks)
			next := now()
			for range ticks {
				next += int64(period)
				for now() < next {
				}
				late = append(late, time.Duration(now()-next))
			}
			return late
		}},
	}
}

func init() {
	if runtime.GOOS == "windows" {
		fmt.Fprintln(os.Stderr, "loop-bench: lateness is timed on QueryPerformanceCounter; time.Sleep and time.Ticker schedule on Go's own clock")
	}
}
