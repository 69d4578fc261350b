// Command loop-bench runs periodic loops at 1 kHz and 500 Hz with each way
// a Go program can keep a period, side by side in one run, and reports the
// lateness of every tick (p50, p99, max, and how many were early) and the
// CPU each way costs (internal/loopbench says how each is timed). It is the
// check of package precise against the targets in BENCHMARKS.md.
//
//	go run ./tools/loop-bench [-seconds 5]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/tickscope/tickscope/internal/loopbench"
	"github.com/tickscope/tickscope/internal/machine"
	"github.com/tickscope/tickscope/internal/stats"
	"github.com/tickscope/tickscope/precise"
)

func main() {
	seconds := flag.Float64("seconds", 5, "how long each loop runs")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	host := machine.Host()
	fmt.Printf("%-16s %6s %10s %10s %10s %6s %7s\n", "method", "rate", "p50", "p99", "max", "early", "CPU")
	for _, hz := range []int{1000, 500} {
		period := time.Second / time.Duration(hz)
		for _, name := range loopbench.Loops {
			if !loopbench.Available(host, name) {
				continue
			}
			r, err := loopbench.Run(ctx, host, name, period, int(*seconds*float64(hz)))
			if err != nil {
				fmt.Fprintf(os.Stderr, "loop-bench: %s: %v\n", name, err)
				os.Exit(1)
			}
			if len(r.Lateness) > 0 {
				late := r.Lateness
				fmt.Printf("%-16s %4dHz %10s %10s %10s %6d %6.1f%%\n", name, hz, fmtD(stats.Percentile(late, 50)), fmtD(stats.Percentile(late, 99)), fmtD(late[len(late)-1]), r.Early, 100*r.CPU)
			}
			if r.Stopped {
				return
			}
		}
	}
	s := precise.Stats()
	fmt.Printf("precise: margin %v at the end, %.1f %% of its waiting spent spinning\n", s.Margin, 100*s.SpinShare)
}

func fmtD(ns int64) string {
	d := time.Duration(ns)
	if d < 10*time.Microsecond && d > -10*time.Microsecond {
		return fmt.Sprintf("%.2fµs", float64(d)/1e3)
	}
	return d.Round(100 * time.Nanosecond).String()
}
