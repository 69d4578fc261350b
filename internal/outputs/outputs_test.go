package outputs_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/outputs"
	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

func measureFile() *rawfile.File {
	return &rawfile.File{
		Tool: rawfile.Tool{Name: "tickscope", Version: "test"}, Created: time.Now(), Command: "measure", Method: "sleep", DelayNs: 1_000_000,
		Query:  &timerinfo.Report{OS: "linux", Arch: "amd64", Linux: &timerinfo.Linux{}},
		Points: []rawfile.Point{{Latencies: []int64{1_001_000, 1_002_000, 1_050_000}}},
	}
}

// written opens o's files and writes them as a measure command does,
// with err the printing's error.
func written(t *testing.T, o *outputs.Files, f *rawfile.File, p *rawfile.Point, err error) error {
	t.Helper()
	if err := o.Open(); err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	return outputs.Write(o, f, report.MeasurementOf(f, p), err)
}

func TestBadPathRefused(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		flag string
		o    outputs.Files
	}{
		{"--html", outputs.Files{HTML: filepath.Join(dir, "missing", "r.html")}},
		{"--html", outputs.Files{HTML: dir}},
		{"--cyclictest-json", outputs.Files{CyclictestJSON: filepath.Join(dir, "missing", "c.json")}},
		{"--histfile", outputs.Files{Histfile: dir}},
	} {
		err := tc.o.Open()
		tc.o.Close()
		var usage *options.UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("%s: err = %v, want a usage error naming the flag", tc.flag, err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".tickscope-*")); len(left) != 0 {
		t.Errorf("temporaries left: %v", left)
	}
}

func TestWritesEveryFile(t *testing.T) {
	dir := t.TempDir()
	html, js, hist := filepath.Join(dir, "r.html"), filepath.Join(dir, "c.json"), filepath.Join(dir, "h.txt")
	f := measureFile()
	if err := written(t, &outputs.Files{HTML: html, CyclictestJSON: js, Histfile: hist}, f, &f.Points[0], nil); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{html: "<svg", js: `"cycles": 3`, hist: "# Total: 000000003"} {
		data, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(data), want) {
			t.Errorf("%s: %v, lacks %q", path, err, want)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".tickscope-*")); len(left) != 0 {
		t.Errorf("temporaries left: %v", left)
	}
}

// TestOutputsMustBeDistinct: an output that is another output (--raw
// included) or the file analyze reads would replace the data it was given
// (`report in.json --html in.json` replaced the raw file with HTML).
func TestOutputsMustBeDistinct(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	if err := os.WriteFile(in, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(in, link); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	for _, tc := range []struct {
		inputs []string
		raw    string
		o      outputs.Files
		want   string // "" for accepted
	}{
		{[]string{in}, "", outputs.Files{HTML: in}, "--html " + in + ": is also the file read"},
		{[]string{in}, "", outputs.Files{HTML: link}, "--html " + link + ": is also the file read"},
		{nil, out, outputs.Files{HTML: out}, "--html " + out + ": is also --raw"},
		{nil, "", outputs.Files{HTML: out, Histfile: out}, "--histfile " + out + ": is also --html"},
		{nil, "", outputs.Files{CyclictestJSON: out, Histfile: filepath.Join(dir, ".", "out")}, "--histfile " + out + ": is also --cyclictest-json"},
		{[]string{in}, out + ".raw", outputs.Files{HTML: out}, ""},
	} {
		err := tc.o.Distinct(tc.raw, tc.inputs)
		var usage *options.UsageError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc, err)
		case tc.want != "" && (!errors.As(err, &usage) || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("%+v: err = %v; want a usage error starting %q", tc, err, tc.want)
		}
	}
	if data, _ := os.ReadFile(in); string(data) != "{}" {
		t.Errorf("the input was changed: %q", data)
	}
}

// TestNoFilesWhenPrintingFailed: a command that could not print its
// result exits 1 and leaves no output files.
func TestNoFilesWhenPrintingFailed(t *testing.T) {
	dir := t.TempDir()
	f := measureFile()
	if err := written(t, &outputs.Files{HTML: filepath.Join(dir, "r.html")}, f, &f.Points[0], errors.New("stdout closed")); err == nil {
		t.Fatal("the printing's error was lost")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a failed command left %d files", len(entries))
	}
}

// The cyclictest files count the samples measure's figures count: a wait
// across a 3 s stop of the process (marked in not_running) is in neither
// the --cyclictest-json summary nor the --histfile, whose cycles, maximum
// and overflows would otherwise be the stop's.
func TestCyclictestFilesLeaveOutNotRunning(t *testing.T) {
	dir := t.TempDir()
	js, hist := filepath.Join(dir, "c.json"), filepath.Join(dir, "h.txt")
	f := measureFile()
	p := &f.Points[0]
	p.Latencies[2] = 3_001_000_000
	p.NotRunning = &rawfile.NotRunning{Samples: []int{2}, Continued: 1}
	if err := written(t, &outputs.Files{CyclictestJSON: js, Histfile: hist}, f, p, nil); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string][]string{
		js:   {`"cycles": 2,`, `"max": 2,`},
		hist: {"# Total: 000000002", "# Max Latencies: 00002", "# Histogram Overflows: 00000"},
	} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(string(data), w) {
				t.Errorf("%s lacks %q:\n%s", filepath.Base(path), w, data)
			}
		}
	}
}
