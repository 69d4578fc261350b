package measure_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/measure"
	"github.com/tickscope/tickscope/internal/options"
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

// command is a measure-like command whose run writes the outputs.
func command(ran *bool) *cobra.Command {
	cmd := &cobra.Command{Use: "measure", SilenceErrors: true, SilenceUsage: true}
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		*ran = true
		f := measureFile()
		return measure.WriteOutputs(cmd, f, report.MeasurementOf(f, &f.Points[0]), nil)
	}
	measure.RegisterOutputs(cmd, true)
	return cmd
}

func TestBadPathRefusedBeforeRunning(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--html", filepath.Join(dir, "missing", "r.html")},
		{"--html", dir},
		{"--cyclictest-json", filepath.Join(dir, "missing", "c.json")},
		{"--histfile", dir},
	} {
		var ran bool
		cmd := command(&ran)
		cmd.SetArgs(args)
		err := cmd.Execute()
		var usage *options.UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), "--"+strings.TrimPrefix(args[0], "--")) {
			t.Errorf("%v: err = %v, want a usage error naming the flag", args, err)
		}
		if ran {
			t.Errorf("%v: the command ran", args)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".tickscope-*")); len(left) != 0 {
		t.Errorf("temporaries left: %v", left)
	}
}

func TestWritesEveryFile(t *testing.T) {
	dir := t.TempDir()
	var ran bool
	cmd := command(&ran)
	html, js, hist := filepath.Join(dir, "r.html"), filepath.Join(dir, "c.json"), filepath.Join(dir, "h.txt")
	cmd.SetArgs([]string{"--html", html, "--cyclictest-json", js, "--histfile", hist})
	if err := cmd.Execute(); err != nil {
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
		args []string
		ok   bool
	}{
		{[]string{in, "--html", in}, false},
		{[]string{in, "--html", link}, false},
		{[]string{"--html", out, "--raw", out}, false},
		{[]string{"--html", out, "--histfile", out}, false},
		{[]string{"--cyclictest-json", out, "--histfile", filepath.Join(dir, ".", "out")}, false},
		{[]string{in, "--html", out, "--raw", out + ".raw"}, true},
	} {
		var ran bool
		cmd := &cobra.Command{Use: "analyze", SilenceErrors: true, SilenceUsage: true, Args: cobra.ArbitraryArgs}
		var raw string
		cmd.Flags().StringVar(&raw, "raw", "", "")
		cmd.RunE = func(*cobra.Command, []string) error { ran = true; return nil }
		measure.RegisterOutputs(cmd, true)
		cmd.SetArgs(tc.args)
		err := cmd.Execute()
		var usage *options.UsageError
		switch {
		case tc.ok && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case !tc.ok && (!errors.As(err, &usage) || ran):
			t.Errorf("%v: err = %v, ran %v; want a usage error before running", tc.args, err, ran)
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
	html := filepath.Join(dir, "r.html")
	cmd := &cobra.Command{Use: "measure", SilenceErrors: true, SilenceUsage: true}
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		f := measureFile()
		return measure.WriteOutputs(cmd, f, report.MeasurementOf(f, &f.Points[0]), errors.New("stdout closed"))
	}
	measure.RegisterOutputs(cmd, false)
	cmd.SetArgs([]string{"--html", html})
	if err := cmd.Execute(); err == nil {
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
	cmd := &cobra.Command{Use: "measure", SilenceErrors: true, SilenceUsage: true}
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		f := measureFile()
		p := &f.Points[0]
		p.Latencies[2] = 3_001_000_000
		p.NotRunning = &rawfile.NotRunning{Samples: []int{2}, Continued: 1}
		return measure.WriteOutputs(cmd, f, report.MeasurementOf(f, p), nil)
	}
	measure.RegisterOutputs(cmd, true)
	cmd.SetArgs([]string{"--cyclictest-json", js, "--histfile", hist})
	if err := cmd.Execute(); err != nil {
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
