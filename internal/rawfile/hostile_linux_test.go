package rawfile_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tickscope/tickscope/internal/rawfile"
)

// TestReadHelper is the child of TestHostileFilesCostLittle: it reads the
// file named by RAWFILE_READ and exits 2 when the reader refuses it.
func TestReadHelper(t *testing.T) {
	path := os.Getenv("RAWFILE_READ")
	if path == "" {
		t.Skip("a helper process of TestHostileFilesCostLittle")
	}
	_, err := rawfile.ReadFile(context.Background(), path, rawfile.Known)
	// The peak resident size of this process's memory since its exec
	// (VmHWM): the parent's rusage would count the memory it shared with
	// the parent before the exec.
	status, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			os.Stdout.WriteString(strings.Fields(line)[1] + "\n")
		}
	}
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(2)
	}
	os.Exit(0)
}

// TestHostileFilesCostLittle reads each hostile file in a process of its
// own and checks that it is refused with the peak resident memory of that
// process under 100 MB: /dev/zero and a FIFO are refused before reading,
// and a file one past a limit is refused as the limit is crossed, without
// holding the document. The time each took is logged, not asserted (it
// depends on the machine); a generous bound catches a hang.
func TestHostileFilesCostLittle(t *testing.T) {
	if testing.Short() {
		t.Skip("writes files of 40 MB")
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zeroLink := filepath.Join(dir, "zero-link.json")
	if err := os.Symlink("/dev/zero", zeroLink); err != nil {
		t.Fatal(err)
	}
	sparse := filepath.Join(dir, "sparse.json")
	if err := os.WriteFile(sparse, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(sparse, rawfile.MaxFileBytes+1); err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	totalPlusOne := write("total.json", compareText(t, rawfile.MaxCompareMethods, rawfile.MaxCompareSettings, rawfile.MaxCompareCycles, 1, 1e6))
	pointsPlusOne := write("points.json", benchText(t, 20, rawfile.MaxBenchRequests, rawfile.MaxPoints+1, 1))
	pointPlusOne := write("point.json", measureText(t, rawfile.MaxSamplesPerPoint+1, 1e6))
	// A 30,000-point compare file: a reader that kept every point as a
	// JSON tree took 1.6 GB at 3,000.
	thirtyThousand := write("30000.json", compareText(t, 30_000, 1, 1, 0, 1e6))
	// Zeros behind a valid start: the reader stops at the first zero byte.
	zeros := write("zeros.json", append([]byte(`{"format":"tickscope-raw","version":1,"points":[`), make([]byte, 50<<20)...))
	// A string of 60 MB: the reader stops at MaxStringBytes, where a
	// tokenizer that gathers each token whole held 193 MB.
	longString := write("string.json", append(append([]byte(`{"format":"tickscope-raw","version":1,"tool":{"name":"`),
		bytes.Repeat([]byte("a"), 60<<20)...), `"}}`...))

	tests := []struct{ name, path, want string }{
		{"/dev/zero", "/dev/zero", "a character device, not a regular file"},
		{"a symlink to /dev/zero", zeroLink, "a character device, not a regular file"},
		{"a FIFO", fifo, "a FIFO, not a regular file"},
		{"a directory", dir, "a directory, not a regular file"},
		{"MaxFileBytes+1", sparse, "over the size limit"},
		{"MaxTotalSamples+1", totalPlusOne, "more than 4800000 samples in all"},
		{"MaxPoints+1", pointsPlusOne, "more than 2004 points"},
		{"MaxSamplesPerPoint+1", pointPlusOne, "more than 100000 samples in one point"},
		{"30,000 compare points", thirtyThousand, "more than 2004 points"},
		{"50 MB of zeros", zeros, "byte 0x00"},
		{"a 60 MB string", longString, "a string over 4096 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestReadHelper$")
			cmd.Env = append(os.Environ(), "RAWFILE_READ="+tt.path)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			timer := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
			cmd.Wait()
			timer.Stop()
			took := time.Since(start)
			rss, err := strconv.Atoi(strings.TrimSpace(stdout.String())) // KiB
			if err != nil {
				t.Fatalf("the helper did not report its VmHWM: %q", stdout.String())
			}
			t.Logf("exit %d in %v, peak resident %.1f MB: %s", cmd.ProcessState.ExitCode(), took.Round(time.Millisecond), float64(rss)/1024, strings.TrimSpace(stderr.String()))
			if code := cmd.ProcessState.ExitCode(); code != 2 {
				t.Errorf("exit %d, want 2 (refused)", code)
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr %q does not say %q", stderr.String(), tt.want)
			}
			if rss > 100*1024 {
				t.Errorf("peak resident %d KiB, over 100 MB", rss)
			}
		})
	}
}
