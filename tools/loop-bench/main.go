// Command loop-bench runs periodic loops at 1 kHz and 500 Hz with each way
// a Go program can keep a period, side by side in one run, and reports the
// lateness of every tick (p50, p99, max, and how many were early) and the
// CPU each way costs (loops.go says how each is timed). It is the
// check of package precise against the targets in BENCHMARKS.md.
//
//	go run ./tools/loop-bench [-seconds 5] [-runs 3] [-loops hybrid,hybrid-ticker,precise-ticker] [-rates 1000,500]
//
// With -runs N the loops alternate (every loop once, then again, N times,
// each run starting one loop later in the list) so that a change in the
// machine's load falls on all of them alike, and the medians of the runs
// are printed after the runs themselves.
//
// Before each run it prints the machine's load (/proc/loadavg, where
// there is one): the loops' figures depend on what else the machine runs.
//
// With -record METHOD it instead prints the lateness of every tick of the
// native loop METHOD (clock-abs, timerfd) at the first rate, one ns value a
// line in the order measured: the traces in precise/testdata/traces that
// precise's margin policies are replayed against.
//
//	go run ./tools/loop-bench -record clock-abs -seconds 4 -rates 1000 -note "what else ran" > precise/testdata/traces/clock-abs.txt
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/machine"
	"github.com/tickscope/tickscope/internal/stats"
	"github.com/tickscope/tickscope/precise"
)

type row struct {
	p50, p99, max float64 // ns
	early         int
	cpu           float64 // share of one CPU
}

func main() {
	seconds := flag.Float64("seconds", 5, "how long each loop runs")
	runs := flag.Int("runs", 1, "how many alternating runs of every loop; medians are printed after them")
	loopsFlag := flag.String("loops", strings.Join(loopNames, ","), "the loops to run, comma-separated")
	ratesFlag := flag.String("rates", "1000,500", "the rates in Hz, comma-separated")
	record := flag.String("record", "", "print the lateness trace of this native loop (clock-abs, timerfd) instead")
	note := flag.String("note", "", "with -record: a line for the trace's header saying under what conditions it was recorded")
	flag.Parse()
	loops := strings.Split(*loopsFlag, ",")
	for _, name := range loops {
		if !slices.Contains(loopNames, name) {
			usage("-loops", name, strings.Join(loopNames, ", "))
		}
	}
	var rates []int
	for _, r := range strings.Split(*ratesFlag, ",") {
		hz, err := strconv.Atoi(r)
		if err != nil || hz < 1 || hz > 10000 {
			usage("-rates", r, "whole Hz from 1 to 10000")
		}
		rates = append(rates, hz)
	}
	if *runs < 1 || *runs > 100 {
		usage("-runs", strconv.Itoa(*runs), "1 to 100")
	}
	if *seconds <= 0 || *seconds > 3600 {
		usage("-seconds", fmt.Sprint(*seconds), "more than 0 and at most 3600")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	host := machine.Host()
	if strings.ContainsAny(*note, "\r\n") {
		usage("-note", *note, "one line")
	}
	if *record != "" {
		period := time.Second / time.Duration(rates[0])
		loadBefore, _ := os.ReadFile("/proc/loadavg")
		late, err := recordLoop(ctx, host, *record, period, int(*seconds*float64(rates[0])))
		if err != nil {
			fmt.Fprintf(os.Stderr, "loop-bench: %s: %v\n", *record, err)
			os.Exit(1)
		}
		fmt.Printf("# lateness (ns) of %s at %d Hz, in the order measured: go run ./tools/loop-bench -record %s -seconds %g -rates %d\n", *record, rates[0], *record, *seconds, rates[0])
		if *note != "" {
			fmt.Printf("# %s\n", *note)
		}
		if load, err := os.ReadFile("/proc/loadavg"); err == nil && len(loadBefore) > 0 {
			fmt.Printf("# loadavg at the start: %s# loadavg at the end: %s", loadBefore, load)
		}
		for _, l := range late {
			fmt.Println(l)
		}
		return
	}
	results := map[string][]row{}
	fmt.Printf("%-4s %-16s %6s %10s %10s %10s %6s %7s\n", "run", "method", "rate", "p50", "p99", "max", "early", "CPU")
	for run := 1; run <= *runs; run++ {
		if load, err := os.ReadFile("/proc/loadavg"); err == nil {
			fmt.Printf("# run %d, %s: loadavg %s", run, time.Now().UTC().Format("15:04:05"), load)
		}
		for _, hz := range rates {
			period := time.Second / time.Duration(hz)
			// Each run starts the order one loop later, so no loop always
			// follows the same one into whatever load the machine has.
			for i := range loops {
				name := loops[(i+run-1)%len(loops)]
				if !loopAvailable(host, name) {
					continue
				}
				r, err := runLoop(ctx, host, name, period, int(*seconds*float64(hz)))
				if err != nil {
					fmt.Fprintf(os.Stderr, "loop-bench: %s: %v\n", name, err)
					os.Exit(1)
				}
				if len(r.Lateness) > 0 {
					late := r.Lateness
					x := row{float64(stats.Percentile(late, 50)), float64(stats.Percentile(late, 99)), float64(late[len(late)-1]), r.Early, r.CPU}
					key := fmt.Sprintf("%-16s %4dHz", name, hz)
					results[key] = append(results[key], x)
					fmt.Printf("%-4d %s %10s %10s %10s %6d %6.1f%%\n", run, key, fmtD(x.p50), fmtD(x.p99), fmtD(x.max), x.early, 100*x.cpu)
				}
				if r.Stopped {
					return
				}
			}
		}
	}
	if *runs > 1 {
		fmt.Printf("\nmedians of %d runs (early: the total)\n", *runs)
		for _, hz := range rates {
			for _, name := range loops {
				key := fmt.Sprintf("%-16s %4dHz", name, hz)
				rs := results[key]
				if len(rs) == 0 {
					continue
				}
				pick := func(f func(row) float64) float64 {
					xs := make([]float64, len(rs))
					for i, r := range rs {
						xs[i] = f(r)
					}
					return median(xs)
				}
				early := 0
				for _, r := range rs {
					early += r.early
				}
				fmt.Printf("%-4s %s %10s %10s %10s %6d %6.1f%%\n", "med", key,
					fmtD(pick(func(r row) float64 { return r.p50 })), fmtD(pick(func(r row) float64 { return r.p99 })),
					fmtD(pick(func(r row) float64 { return r.max })), early, 100*pick(func(r row) float64 { return r.cpu }))
			}
		}
	}
	s := precise.Stats()
	fmt.Printf("precise: margin %v at the end, %.1f %% of its waiting spent spinning\n", s.Margin, 100*s.SpinShare)
}

func usage(flagName, value, allowed string) {
	fmt.Fprintf(os.Stderr, "loop-bench: %s %q: allowed %s\n", flagName, value, allowed)
	os.Exit(2)
}

func fmtD(ns float64) string {
	d := time.Duration(ns)
	if d < 10*time.Microsecond && d > -10*time.Microsecond {
		return fmt.Sprintf("%.2fµs", ns/1e3)
	}
	return d.Round(100 * time.Nanosecond).String()
}
