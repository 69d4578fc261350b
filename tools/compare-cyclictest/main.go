// Command compare-cyclictest measures a 1 ms clock_nanosleep loop with
// tickscope and with cyclictest (Debian's rt-tests), alternately on the same
// machine, and prints their lateness side by side: the check that tickscope
// measures a wait the way the reference tool does (BENCHMARKS.md).
//
//	go run ./tools/compare-cyclictest [-rounds 4] [-cpu 1]
//
// The issue's comparison is one 5 s run of each: `tickscope measure --method
// clock-abs --delay 1ms --samples 5000` and `cyclictest -q -D 5 -i 1000
// --default-system`. On a shared VM the noise drifts over seconds, so this
// splits the same 5 s each into rounds of one second that alternate
// (tickscope, cyclictest, tickscope, ...) and compares the pooled medians as
// well as each round's. -cpu pins both under `taskset -c CPU`: the two vCPUs
// of a VM can differ by tens of µs.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
)

func main() {
	rounds := flag.Int("rounds", 5, "alternating rounds of one second of each tool")
	cpu := flag.String("cpu", "", "pin both tools to this CPU with taskset")
	tickscope := flag.String("tickscope", "", "tickscope binary (default: go run ./cmd/tickscope)")
	flag.Parse()

	base := []string{}
	if *cpu != "" {
		base = []string{"taskset", "-c", *cpu}
	}
	tsCmd := append(append([]string{}, base...), "go", "run", "./cmd/tickscope")
	if *tickscope != "" {
		tsCmd = append(append([]string{}, base...), *tickscope)
	}
	raw, err := os.CreateTemp("", "compare-cyclictest-*.json")
	check(err)
	raw.Close()
	defer os.Remove(raw.Name())

	fmt.Printf("%-6s %-26s %-26s %s\n", "round", "tickscope p50 / p99 (µs)", "cyclictest p50 / p99 (µs)", "medians agree (15 % or 5 µs)")
	pooledTS, pooledCT := histogram{}, histogram{}
	agreed := 0
	for r := 1; r <= *rounds; r++ {
		ts, err := runTickscope(append(tsCmd, "measure", "--method", "clock-abs", "--delay", "1ms", "--samples", "1000", "--raw", raw.Name()), raw.Name())
		check(err)
		ct, err := runCyclictest(append(append([]string{}, base...), "cyclictest", "-q", "-D", "1", "-i", "1000", "--default-system", "-h", "20000"))
		check(err)
		pooledTS.add(ts)
		pooledCT.add(ct)
		if report(fmt.Sprint(r), ts, ct) {
			agreed++
		}
	}
	pooled := report("pooled", pooledTS, pooledCT)
	fmt.Printf("%d of %d rounds agree; pooled medians agree: %v\n", agreed, *rounds, pooled)
}

// report prints one row and says whether the medians agree.
func report(label string, ts, ct histogram) bool {
	tsP50, tsP99 := ts.percentile(50), ts.percentile(99)
	ctP50, ctP99 := ct.percentile(50), ct.percentile(99)
	ok := agrees(tsP50, ctP50)
	fmt.Printf("%-6s %-26s %-26s %v\n", label, fmt.Sprintf("%.0f / %.0f", tsP50, tsP99), fmt.Sprintf("%.0f / %.0f", ctP50, ctP99), ok)
	return ok
}

// histogram counts lateness samples per whole µs, as cyclictest -h does.
type histogram map[int]int

func (h histogram) add(other histogram) {
	for k, n := range other {
		h[k] += n
	}
}

// percentile is the nearest-rank percentile, the definition tickscope uses.
func (h histogram) percentile(p float64) float64 {
	total := 0
	keys := make([]int, 0, len(h))
	for k, n := range h {
		keys = append(keys, k)
		total += n
	}
	if total == 0 {
		return math.NaN()
	}
	sort.Ints(keys)
	want := int(math.Ceil(p / 100 * float64(total)))
	acc := 0
	for _, k := range keys {
		acc += h[k]
		if acc >= want {
			return float64(k)
		}
	}
	return float64(keys[len(keys)-1])
}

// runTickscope measures and reads every sample back from the raw file,
// binned like cyclictest's histogram (whole µs of lateness, truncated).
func runTickscope(argv []string, rawPath string) (histogram, error) {
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", strings.Join(argv, " "), err, out)
	}
	data, err := os.ReadFile(rawPath)
	if err != nil {
		return nil, err
	}
	var f struct {
		DelayNs int64 `json:"delay_ns"`
		Points  []struct {
			Latencies []int64 `json:"latencies_ns"`
		} `json:"points"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	h := histogram{}
	for _, p := range f.Points {
		for _, v := range p.Latencies {
			h[int((v-f.DelayNs)/1000)]++
		}
	}
	return h, nil
}

func runCyclictest(argv []string) (histogram, error) {
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", strings.Join(argv, " "), err, out)
	}
	return parseHistogram(out)
}

// parseHistogram reads cyclictest -h output ("µs count" lines for thread 0).
func parseHistogram(out []byte) (histogram, error) {
	counts := histogram{}
	total := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || strings.HasPrefix(f[0], "#") {
			continue
		}
		us, err1 := strconv.Atoi(f[0])
		n, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			continue
		}
		counts[us] += n
		total += n
	}
	if total == 0 {
		return nil, fmt.Errorf("no histogram in cyclictest output")
	}
	return counts, nil
}

func agrees(a, b float64) bool {
	d := math.Abs(a - b)
	return d <= 5 || d <= 0.15*math.Max(a, b)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare-cyclictest:", err)
		os.Exit(1)
	}
}
