// Package cyclictest writes a measurement in the two formats of rt-tests'
// cyclictest that plotting scripts read: the --json file and the text
// histogram of -h/--histfile. The Linux real-time community's tools (OSADL's
// latency plots among them) read these, so a tickscope measurement on
// Windows or Linux can go through the same scripts.
//
// cyclictest measures lateness: how long after its due time a thread woke,
// in whole µs. tickscope's samples are the whole wait, so the value written
// is the lateness, latency − requested delay, truncated to µs as
// cyclictest's is. A wait that returned early (negative lateness) counts in
// the histogram's bucket 0, as cyclictest has no negative bucket, while min
// keeps its sign; min and max are whole µs, avg the exact mean. The
// histogram has HistogramBuckets buckets; later samples are overflows.
//
// The schema is the one rt-tests 2.x writes (src/cyclictest/cyclictest.c,
// write_stats, and src/lib/rt-utils.c, rt_write_json), checked against a
// real file by the tests: including its two keys spelt with a colon,
// "cmdline:" and "rt_test_version:", which is how cyclictest writes them.
package cyclictest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// HistogramBuckets is how many 1 µs buckets the histogram has, as
// cyclictest's -h 10000: a lateness of 10 ms or more is an overflow, so
// that a stall of a minute (which a raw file may hold) cannot make a
// histogram of 60 million buckets.
const HistogramBuckets = 10_000

// maxListedOverflows is how many overflowing cycle numbers are listed;
// cyclictest too lists a bounded number and counts the others.
const maxListedOverflows = 1000

// Stats is one measurement as cyclictest counts it.
type Stats struct {
	// Histogram counts lateness in whole µs, bucket 0 to len-1 (at most
	// HistogramBuckets); Overflows counts the samples beyond it, and
	// OverflowCycles lists the first of their cycle numbers (from 0).
	Histogram      []int
	Overflows      int
	OverflowCycles []int
	Cycles         int
	// Min and Max are the lateness extremes in whole µs (truncated, as
	// cyclictest counts), Avg the mean.
	Min, Max int64
	Avg      float64
}

// Of counts the point's samples against the requested delay (ns).
func Of(latencies []int64, delayNs int64) Stats {
	s := Stats{Cycles: len(latencies)}
	if len(latencies) == 0 {
		return s
	}
	s.Min, s.Max = math.MaxInt64, math.MinInt64
	var sum float64
	for _, v := range latencies {
		us := (v - delayNs) / 1000
		s.Min, s.Max = min(s.Min, us), max(s.Max, us)
		sum += float64(v-delayNs) / 1000
	}
	s.Avg = sum / float64(len(latencies))
	s.Histogram = make([]int, min(max(s.Max, 0)+1, HistogramBuckets))
	for i, v := range latencies {
		bucket := max((v-delayNs)/1000, 0)
		if bucket >= HistogramBuckets {
			s.Overflows++
			if len(s.OverflowCycles) < maxListedOverflows {
				s.OverflowCycles = append(s.OverflowCycles, i)
			}
			continue
		}
		s.Histogram[bucket]++
	}
	return s
}

// histogram is cyclictest's µs bucket → count object, non-empty buckets in
// numeric order.
type histogram []int

func (h histogram) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteString("{")
	first := true
	for us, n := range h {
		if n == 0 {
			continue
		}
		if !first {
			b.WriteString(",")
		}
		first = false
		fmt.Fprintf(&b, "%q:%d", strconv.Itoa(us), n)
	}
	b.WriteString("}")
	return []byte(b.String()), nil
}

// avg is written with two decimals, as cyclictest's "%.2f", so that it
// reads as a number with a fraction even when it is whole.
type avg float64

func (a avg) MarshalJSON() ([]byte, error) { return []byte(fmt.Sprintf("%.2f", float64(a))), nil }

type thread struct {
	Histogram histogram `json:"histogram"`
	Cycles    int       `json:"cycles"`
	Min       int64     `json:"min"`
	Max       int64     `json:"max"`
	Avg       avg       `json:"avg"`
	// CPU and Node are the CPU and NUMA node the thread was pinned to:
	// tickscope pins none, so -1.
	CPU  int `json:"cpu"`
	Node int `json:"node"`
}

type sysinfo struct {
	Sysname  string `json:"sysname"`
	Nodename string `json:"nodename"`
	Release  string `json:"release"`
	Version  string `json:"version"`
	Machine  string `json:"machine"`
	Realtime int    `json:"realtime"`
}

type file struct {
	FileVersion  int               `json:"file_version"`
	Cmdline      string            `json:"cmdline:"`
	Version      string            `json:"rt_test_version:"`
	Start        string            `json:"start_time"`
	End          string            `json:"end_time"`
	ReturnCode   int               `json:"return_code"`
	Sysinfo      sysinfo           `json:"sysinfo"`
	NumThreads   int               `json:"num_threads"`
	ResolutionNs int64             `json:"resolution_in_ns"`
	Thread       map[string]thread `json:"thread"`
}

// timeFormat is cyclictest's strftime "%a, %d %b %Y %T %z".
const timeFormat = "Mon, 02 Jan 2006 15:04:05 -0700"

// WriteJSON writes the measure file f (its first point) as cyclictest's
// --json file; cmdline is the command that measured.
func WriteJSON(w io.Writer, f *rawfile.File, cmdline string) error {
	p := &f.Points[0]
	s := Of(p.Running(), f.DelayNs) // as measure judges: not the samples taken while not running
	end := f.Created
	start := end.Add(-time.Duration(p.Conditions.WallNs))
	out := file{
		FileVersion: 1, Cmdline: cmdline, Version: f.Tool.Name + " " + f.Tool.Version,
		Start: start.Format(timeFormat), End: end.Format(timeFormat),
		Sysinfo:    sysinfoOf(f.Query),
		NumThreads: 1,
		Thread: map[string]thread{"0": {
			Histogram: s.Histogram, Cycles: s.Cycles, Min: s.Min, Max: s.Max, Avg: avg(s.Avg), CPU: -1, Node: -1,
		}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// sysinfoOf fills uname's fields from what the raw file recorded; the
// host name is not recorded, so it is empty.
func sysinfoOf(q *timerinfo.Report) sysinfo {
	var s sysinfo
	if q == nil {
		return s
	}
	s.Machine = map[string]string{"amd64": "x86_64", "arm64": "aarch64", "386": "i686"}[q.Arch]
	if s.Machine == "" {
		s.Machine = q.Arch
	}
	switch {
	case q.Windows != nil:
		s.Sysname, s.Release, s.Version = "Windows", q.Windows.Version, q.Windows.Product
	case q.Linux != nil:
		s.Sysname, s.Release, s.Version = "Linux", q.Linux.KernelRelease, q.Linux.KernelVersion
		if strings.Contains(q.Linux.Preemption, "RT") {
			s.Realtime = 1
		}
	case q.Other != nil:
		s.Sysname, s.Release = q.OS, q.Other.KernelRelease
	}
	return s
}

// WriteHistfile writes cyclictest's -h text histogram of one thread: a
// "%06d %06d" row per µs bucket from 0 to the maximum (at most
// HistogramBuckets), then the summary lines, with the overflows and their
// cycle numbers.
func WriteHistfile(w io.Writer, latencies []int64, delayNs int64) error {
	s := Of(latencies, delayNs)
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "# Histogram")
	for us, n := range s.Histogram {
		fmt.Fprintf(bw, "%06d %06d\n", us, n)
	}
	fmt.Fprintf(bw, "# Total: %09d\n", s.Cycles)
	fmt.Fprintf(bw, "# Min Latencies: %05d\n", s.Min)
	fmt.Fprintf(bw, "# Avg Latencies: %05d\n", int64(s.Avg))
	fmt.Fprintf(bw, "# Max Latencies: %05d\n", s.Max)
	fmt.Fprintf(bw, "# Histogram Overflows: %05d\n", s.Overflows)
	fmt.Fprintln(bw, "# Histogram Overflow at cycle number:")
	fmt.Fprint(bw, "# Thread 0:")
	for _, c := range s.OverflowCycles {
		fmt.Fprintf(bw, " %05d", c)
	}
	if others := s.Overflows - len(s.OverflowCycles); others > 0 {
		fmt.Fprintf(bw, " # %05d others", others)
	}
	fmt.Fprint(bw, "\n\n")
	return bw.Flush()
}
