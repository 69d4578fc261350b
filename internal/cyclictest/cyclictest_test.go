package cyclictest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/cyclictest"
	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		name      string
		latencies []int64
		delay     int64
		want      cyclictest.Stats
	}{
		{"empty", nil, 1000, cyclictest.Stats{}},
		{"truncates to µs", []int64{1_000_999, 1_002_000, 1_002_500}, 1_000_000,
			cyclictest.Stats{Histogram: []int{1, 0, 2}, Cycles: 3, Min: 0, Max: 2, Avg: (0.999 + 2 + 2.5) / 3}},
		{"early counts in bucket 0, min stays exact", []int64{997_000, 1_001_000}, 1_000_000,
			cyclictest.Stats{Histogram: []int{1, 1}, Cycles: 2, Min: -3, Max: 1, Avg: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := cyclictest.Of(tc.latencies, tc.delay)
			if math.Abs(got.Avg-tc.want.Avg) < 1e-9 {
				got.Avg = tc.want.Avg // a sum of floats, to rounding
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Of = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func file(latencies []int64) *rawfile.File {
	return &rawfile.File{
		Tool: rawfile.Tool{Name: "tickscope", Version: "test"}, Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Command: "measure", Method: "nanosleep", DelayNs: 1_000_000,
		Query:  &timerinfo.Report{OS: "linux", Arch: "amd64", Linux: &timerinfo.Linux{KernelRelease: "6.1.0", Preemption: "PREEMPT_DYNAMIC"}},
		Points: []rawfile.Point{{Latencies: latencies, Conditions: timerinfo.Conditions{WallNs: int64(2 * time.Second)}}},
	}
}

func TestHistfile(t *testing.T) {
	var b bytes.Buffer
	if err := cyclictest.WriteHistfile(&b, []int64{1_000_100, 1_002_000, 1_002_900}, 1_000_000); err != nil {
		t.Fatal(err)
	}
	want := "# Histogram\n000000 000001\n000001 000000\n000002 000002\n# Total: 000000003\n# Min Latencies: 00000\n" +
		"# Avg Latencies: 00001\n# Max Latencies: 00002\n# Histogram Overflows: 00000\n# Histogram Overflow at cycle number:\n# Thread 0:\n\n"
	if b.String() != want {
		t.Errorf("histfile:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestJSON(t *testing.T) {
	var b bytes.Buffer
	if err := cyclictest.WriteJSON(&b, file([]int64{1_000_100, 1_002_000, 1_002_900}), "tickscope measure"); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	th := got["thread"].(map[string]any)["0"].(map[string]any)
	if h := th["histogram"].(map[string]any); h["0"] != 1.0 || h["2"] != 2.0 || len(h) != 2 {
		t.Errorf("histogram %v, want 0: 1 and 2: 2", h)
	}
	if !strings.Contains(b.String(), `"avg": 1.67`) || got["start_time"] != "Fri, 02 Jan 2026 03:04:03 +0000" {
		t.Errorf("avg or start_time not as cyclictest writes them:\n%s", b.String())
	}
}

// shape lists every key path of a JSON value with its JSON type; the
// thread numbers and histogram buckets are data, not keys.
func shape(v any, path string, out map[string]string) {
	switch v := v.(type) {
	case map[string]any:
		out[path] = "object"
		for k, e := range v {
			if strings.HasSuffix(path, "/thread") || strings.HasSuffix(path, "/histogram") {
				k = "*"
			}
			shape(e, path+"/"+k, out)
		}
	case float64:
		out[path] = "number"
	default:
		out[path] = fmt.Sprintf("%T", v)
	}
}

// TestSameKeysAsCyclictest runs the real cyclictest (rt-tests) and checks
// that tickscope's file has the same keys with the same JSON types. Without
// cyclictest it skips, unless TICKSCOPE_REQUIRE_CYCLICTEST=1 (CI installs
// rt-tests).
func TestSameKeysAsCyclictest(t *testing.T) {
	bin, err := exec.LookPath("cyclictest")
	if err != nil {
		if os.Getenv("TICKSCOPE_REQUIRE_CYCLICTEST") == "1" {
			t.Fatal("no cyclictest on PATH (TICKSCOPE_REQUIRE_CYCLICTEST=1)")
		}
		t.Skip("no cyclictest on PATH (apt-get install rt-tests)")
	}
	real := filepath.Join(t.TempDir(), "cyclictest.json")
	// 50 waits of 1 ms on one thread, quiet, with a histogram so that its
	// buckets are written.
	out, err := exec.Command(bin, "-q", "-t", "1", "-l", "50", "-i", "1000", "-h", "1000", "--json="+real).CombinedOutput()
	if err != nil {
		t.Fatalf("cyclictest: %v: %s", err, out)
	}
	data, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	var theirs, ours any
	if err := json.Unmarshal(data, &theirs); err != nil {
		t.Fatalf("cyclictest's file: %v", err)
	}
	var b bytes.Buffer
	if err := cyclictest.WriteJSON(&b, file([]int64{1_000_100, 1_002_000}), "tickscope measure"); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b.Bytes(), &ours); err != nil {
		t.Fatal(err)
	}
	want, got := map[string]string{}, map[string]string{}
	shape(theirs, "", want)
	shape(ours, "", got)
	if !reflect.DeepEqual(got, want) {
		var diff []string
		for k, v := range want {
			if got[k] != v {
				diff = append(diff, fmt.Sprintf("%s: cyclictest %s, tickscope %q", k, v, got[k]))
			}
		}
		for k, v := range got {
			if _, ok := want[k]; !ok {
				diff = append(diff, fmt.Sprintf("%s: tickscope %s, not in cyclictest's", k, v))
			}
		}
		slices.Sort(diff)
		t.Errorf("key sets differ:\n%s", strings.Join(diff, "\n"))
	}
}

// TestHistogramIsBounded: a stall of a minute (a raw file may hold one) is
// an overflow with its cycle number, not a histogram of 60 million buckets.
func TestHistogramIsBounded(t *testing.T) {
	const delay = 1_000_000
	lat := []int64{delay + 5_000, delay + 60_000_000_000, delay + 7_000, delay + cyclictest.HistogramBuckets*1000}
	s := cyclictest.Of(lat, delay)
	if len(s.Histogram) != cyclictest.HistogramBuckets || s.Overflows != 2 || len(s.OverflowCycles) != 2 || s.OverflowCycles[0] != 1 || s.OverflowCycles[1] != 3 {
		t.Errorf("histogram of %d buckets, %d overflows at %v; want %d buckets, 2 at [1 3]", len(s.Histogram), s.Overflows, s.OverflowCycles, cyclictest.HistogramBuckets)
	}
	if s.Max != 60_000_000 {
		t.Errorf("max %d µs, want the stall's 60000000", s.Max)
	}
	var b strings.Builder
	if err := cyclictest.WriteHistfile(&b, lat, delay); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "# Histogram Overflows: 00002\n") || !strings.Contains(b.String(), "# Thread 0: 00001 00003\n") {
		t.Errorf("the histfile's overflow lines:\n%s", b.String()[max(0, b.Len()-300):])
	}
	if b.Len() > 400_000 {
		t.Errorf("the histfile is %d bytes", b.Len())
	}
}
