package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/sweep"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// compareFile is a compare raw file of the given methods × slacks (0: the
// default), each cell's intervals all latency ns.
func compareFile(methods []string, slacks []int64, latency int64) *rawfile.File {
	f := &rawfile.File{Command: "compare", Method: "(per point)", DelayNs: 1_000_000,
		Query: &timerinfo.Report{OS: "linux", Linux: &timerinfo.Linux{}}}
	for _, m := range methods {
		for _, s := range slacks {
			f.Points = append(f.Points, rawfile.Point{Method: m, Requested: timerinfo.Setting{SlackNs: s},
				Latencies: []int64{latency, latency, latency}})
		}
	}
	return f
}

func TestCompareOfMatrix(t *testing.T) {
	f := compareFile([]string{"a", "b"}, []int64{0, 1}, 1_100_000)
	f.Points[3].Latencies = []int64{1_000_000, 1_000_000} // b under slack 1 is the best
	// A second point for a cell (a file the reader would refuse) is left
	// out, not counted twice.
	f.Points = append(f.Points, rawfile.Point{Method: "a", Latencies: []int64{5_000_000}})
	c := report.CompareOf(f, sweep.JudgeCompare(f, nil, nil))
	if fmt.Sprint(c.Methods, c.Settings) != "[a b] [none slack 1ns]" {
		t.Fatalf("rows and columns %v %v", c.Methods, c.Settings)
	}
	if len(c.Cells) != 4 || c.Cells[0].P50 != 1_100_000 || c.Cells[3].Count != 2 {
		t.Errorf("cells %+v", c.Cells)
	}
	if c.Best[1] != 1 || !strings.Contains(c.Verdict, "use b with slack 1ns") {
		t.Errorf("best %v, verdict %q", c.Best, c.Verdict)
	}
	// Given rows and columns: a point outside them is left out.
	c = report.CompareOf(f, sweep.JudgeCompare(f, []string{"b"}, []string{"slack 1ns"}))
	if len(c.Cells) != 1 || c.Cells[0].Count != 2 {
		t.Errorf("cells %+v", c.Cells)
	}
	// No rows: an empty matrix, no panic.
	if c = report.CompareOf(f, sweep.JudgeCompare(f, []string{}, []string{"none"})); len(c.Cells) != 0 || c.Verdict != "" {
		t.Errorf("empty matrix %+v", c)
	}
}

// TestCompareOfIsBounded: a compare file of 30,000 points, each its own
// method and setting, made a 30,000 × 30,000 matrix (at 3,000 points:
// 38.5 s, 1.6 GB, 225 MB printed). The reader refuses such a file, naming
// the limit, so JudgeCompare is only given matrices of at most
// rawfile.MaxCompareMethods × rawfile.MaxCompareSettings cells from a file;
// at that limit it builds each cell once.
func TestCompareOfIsBounded(t *testing.T) {
	hostile := compareFile(nil, nil, 1_000_000)
	hostile.Tool, hostile.Created = rawfile.Tool{Name: "tickscope"}, time.Now().UTC()
	hostile.Format, hostile.Version = rawfile.FormatName, rawfile.Version
	for i := range 30_000 {
		hostile.Points = append(hostile.Points, rawfile.Point{Method: fmt.Sprintf("m%d", i),
			Requested: timerinfo.Setting{SlackNs: int64(i + 1)}, Latencies: []int64{1_000_000}})
	}
	data, err := json.Marshal(hostile)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "hostile.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := rawfile.ReadFile(context.Background(), path, rawfile.Limits{}); err == nil || !strings.Contains(err.Error(), "points: more than 2004 points") {
		t.Errorf("the 30,000-point compare file: %v", err)
	}
	hostile.Points = hostile.Points[:rawfile.MaxCompareSettings+1]
	if err := hostile.Validate(rawfile.Limits{}); err == nil || !strings.Contains(err.Error(), "5th setting") {
		t.Errorf("a compare file of 5 settings: %v", err)
	}

	methods := make([]string, rawfile.MaxCompareMethods)
	for i := range methods {
		methods[i] = fmt.Sprintf("m%d", i)
	}
	largest := compareFile(methods, []int64{0, 1, 2, 3}, 1_000_000)
	c := report.CompareOf(largest, sweep.JudgeCompare(largest, nil, nil))
	var out bytes.Buffer
	report.WriteCompare(&out, c)
	if len(c.Cells) != rawfile.MaxCompareMethods*rawfile.MaxCompareSettings {
		t.Errorf("%d cells", len(c.Cells))
	}
	for i, cell := range c.Cells {
		if cell.Count != 3 {
			t.Errorf("cell %d holds %d intervals, want 3", i, cell.Count)
		}
	}
	if lines := strings.Count(out.String(), "\n"); lines > len(c.Cells)+len(methods)+10 {
		t.Errorf("%d lines for %d cells", lines, len(c.Cells))
	}
}
