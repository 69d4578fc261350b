// Command load-effect measures what tickscope's --load does, side by side
// in one run, alternating, so that the machine's own drift is shared
// by every contender (BENCHMARKS.md):
//
//	go run ./tools/load-effect -mode kinds [-threads 1,2] [-rounds 5] [-samples 2000]
//	go run ./tools/load-effect -mode bench -tickscope BIN [-threads 1,2] [-rounds 3]
//	go run ./tools/load-effect -mode model -tickscope BIN [-threads 2]
//
// kinds: a 1 ms clock-abs loop (tickscope's measurement loop, in this
// process) with no load, under N busy threads of the CPU-bound loop --load
// runs, under N threads of a memory-bound loop (each streams through 64 MiB,
// past the last-level cache, a cache line at a time), and under the
// CPU-bound load with GOMAXPROCS left where it was: whether a memory-bound
// kind adds anything, and whether raising GOMAXPROCS matters.
//
// bench: `tickscope bench --json` with no load and with --load N, in
// rotation: the pick, its lateness, and the default slack's (50 µs).
//
// model: `tickscope bench --simulate S --json` for every scenario, with
// nothing else running and with N busy threads in this process: whether
// the model's recommendation changes (it runs on a virtual clock; tickscope
// refuses --load with --simulate).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tickscope/tickscope/internal/machine"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/stats"
)

func main() {
	mode := flag.String("mode", "kinds", "kinds, bench or model")
	threadList := flag.String("threads", "1,2", "comma-separated load sizes")
	rounds := flag.Int("rounds", 5, "alternating rounds")
	samples := flag.Int("samples", 2000, "kinds: 1 ms waits per contender and round")
	tickscope := flag.String("tickscope", "", "bench, model: the tickscope binary")
	flag.Parse()
	var threads []int
	for _, s := range strings.Split(*threadList, ",") {
		n, err := strconv.Atoi(s)
		check(err)
		threads = append(threads, n)
	}
	load, err := os.ReadFile("/proc/loadavg")
	if err == nil {
		fmt.Printf("load average at start: %s", load)
	}
	switch *mode {
	case "kinds":
		kinds(threads, *rounds, *samples)
	case "bench":
		bench(*tickscope, threads, *rounds)
	case "model":
		model(*tickscope, threads)
	default:
		check(fmt.Errorf("unknown -mode %q", *mode))
	}
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("load average at end: %s", load)
	}
}

// memoryBound streams through 64 MiB, a cache line at a time, reading and
// writing: each access misses every cache level on the machines measured
// (L3 32 MiB).
var memoryBound = sample.Work{Kind: "memory", Run: func(stop *atomic.Bool) uint64 {
	buf := make([]uint64, 64<<20/8)
	var sum uint64
	for {
		for i := 0; i < len(buf); i += 8 {
			buf[i]++
			sum += buf[i]
			if i&(8*4096-1) == 0 && stop.Load() {
				return sum
			}
		}
	}
}}

type contender struct {
	name      string
	threads   int
	work      sample.Work
	keepProcs bool // GOMAXPROCS left where it was
}

type tally struct {
	lateness      []int64
	overruns      int
	loadCPU       time.Duration
	wall          time.Duration
	roundP99, p50 []int64
}

func kinds(threads []int, rounds, samples int) {
	contenders := []contender{{name: "none"}}
	for _, n := range threads {
		contenders = append(contenders,
			contender{fmt.Sprintf("cpu %d", n), n, sample.CPUBound, false},
			contender{fmt.Sprintf("memory %d", n), n, memoryBound, false},
			contender{fmt.Sprintf("cpu %d, GOMAXPROCS kept", n), n, sample.CPUBound, true})
	}
	host := machine.Host()
	tallies := make([]tally, len(contenders))
	for r := range rounds {
		// Each round starts one later in the list, so that no contender
		// always follows the same one.
		for k := range contenders {
			i := (k + r) % len(contenders)
			measureUnder(host, contenders[i], samples, &tallies[i])
		}
		fmt.Printf("round %d of %d done\n", r+1, rounds)
	}
	fmt.Printf("\n1 ms clock-abs waits, %d a round, %d rounds; lateness in µs (pooled), the busy threads' CPU share\n", samples, rounds)
	fmt.Printf("%-24s %8s %8s %8s %9s %8s %9s %10s  %s\n", "load", "p50", "p99", "p99.9", "max", ">1ms %", "overruns", "load CPU", "p50 / p99 per round")
	for i, c := range contenders {
		t := tallies[i]
		slices.Sort(t.lateness)
		s := stats.SummarizeSorted(t.lateness)
		over := 0
		for _, v := range t.lateness {
			if v > int64(time.Millisecond) {
				over++
			}
		}
		share := "-"
		if c.threads > 0 {
			share = fmt.Sprintf("%.0f %%", 100*float64(t.loadCPU)/float64(t.wall)/float64(c.threads))
		}
		var perRound []string
		for j := range t.p50 {
			perRound = append(perRound, fmt.Sprintf("%.0f/%.0f", us(t.p50[j]), us(t.roundP99[j])))
		}
		fmt.Printf("%-24s %8.1f %8.1f %8.1f %9.1f %8.2f %9d %10s  %s\n", c.name, us(s.P50), us(s.P99), us(s.P999), us(s.Max),
			100*float64(over)/float64(len(t.lateness)), t.overruns, share, strings.Join(perRound, " "))
	}
}

func measureUnder(host seam.Host, c contender, samples int, t *tally) {
	loaded, load, err := sample.Loaded(host, c.threads, c.work)
	check(err)
	procs := runtime.GOMAXPROCS(0)
	check(load.Start())
	if c.keepProcs {
		runtime.GOMAXPROCS(procs)
	}
	start := time.Now()
	p, err := sample.Measure(context.Background(), loaded, sample.Spec{Method: "clock-abs", Delay: time.Millisecond, Samples: samples, Warmup: sample.DefaultWarmup(samples)}, nil)
	wall := time.Since(start)
	cpu := load.CPU()
	load.Stop()
	check(err)
	round := make([]int64, len(p.Latencies))
	for i, v := range p.Latencies {
		round[i] = v - int64(time.Millisecond)
	}
	t.lateness = append(t.lateness, round...)
	slices.Sort(round)
	s := stats.SummarizeSorted(round)
	t.p50, t.roundP99 = append(t.p50, s.P50), append(t.roundP99, s.P99)
	t.overruns += p.Overruns
	t.loadCPU += cpu
	t.wall += wall
}

func us(ns int64) float64 { return float64(ns) / 1e3 }

// slackBench is what this tool reads of the Linux bench's --json.
type slackBench struct {
	Result struct {
		Rows []struct {
			Setting struct {
				SlackNs int64  `json:"slack_ns"`
				DMA     *int32 `json:"cpu_dma_latency_us"`
			} `json:"setting"`
			Lateness struct {
				P50 int64 `json:"p50_ns"`
				P99 int64 `json:"p99_ns"`
			} `json:"lateness"`
		} `json:"rows"`
		Recommended int    `json:"recommended_row"`
		Stability   string `json:"stability"`
	} `json:"result"`
}

func bench(tickscope string, threads []int, rounds int) {
	if tickscope == "" {
		check(fmt.Errorf("-tickscope BIN is needed"))
	}
	loads := append([]int{0}, threads...)
	fmt.Printf("%-6s %-8s %-28s %-18s %-18s %-18s %s\n", "round", "--load", "pick", "pick p50/p99 µs", "50µs p50/p99 µs", "1ns+dma0 p50/p99", "stability")
	for r := range rounds {
		for k := range loads {
			n := loads[(k+r)%len(loads)]
			args := []string{"bench", "--json"}
			if n > 0 {
				args = append(args, "--load", strconv.Itoa(n))
			}
			out, err := exec.Command(tickscope, args...).Output()
			check(err)
			var b slackBench
			check(json.Unmarshal(out, &b))
			pick, row50, finest := "nothing", "-", "-"
			pickLate := "-"
			for i, row := range b.Result.Rows {
				name := time.Duration(row.Setting.SlackNs).String()
				if row.Setting.DMA != nil {
					name += " + dma " + strconv.Itoa(int(*row.Setting.DMA))
				}
				figures := fmt.Sprintf("%.0f / %.0f", us(row.Lateness.P50), us(row.Lateness.P99))
				if i == b.Result.Recommended {
					pick, pickLate = name, figures
				}
				if row.Setting.SlackNs == int64(50*time.Microsecond) && row.Setting.DMA == nil {
					row50 = figures
				}
				if row.Setting.SlackNs == 1 && row.Setting.DMA != nil {
					finest = figures
				}
			}
			fmt.Printf("%-6d %-8d %-28s %-18s %-18s %-18s %s\n", r+1, n, pick, pickLate, row50, finest, b.Result.Stability)
		}
	}
}

func model(tickscope string, threads []int) {
	if tickscope == "" {
		check(fmt.Errorf("-tickscope BIN is needed"))
	}
	host := machine.Host()
	fmt.Printf("SIMULATED  %-16s %-8s %-10s %-10s %s\n", "scenario", "load", "idle s", "loaded s", "--json output")
	for _, sc := range sim.Scenarios() {
		for _, n := range threads {
			run := func() ([]byte, time.Duration) {
				start := time.Now()
				out, err := exec.Command(tickscope, "bench", "--simulate", sc.Name, "--json").Output()
				check(err)
				return out, time.Since(start)
			}
			idle, idleWall := run()
			_, load, err := sample.Loaded(host, n, sample.CPUBound)
			check(err)
			check(load.Start())
			loaded, loadedWall := run()
			load.Stop()
			same := "identical"
			if !bytes.Equal(idle, loaded) {
				same = "DIFFERENT"
			}
			fmt.Printf("SIMULATED  %-16s %-8d %-10.2f %-10.2f %s\n", sc.Name, n, idleWall.Seconds(), loadedWall.Seconds(), same)
		}
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "load-effect:", err)
		os.Exit(1)
	}
}
