package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tickscope/tickscope/internal/sample"
)

// A measure stopped by job control for 300 ms in the middle of its waits
// (the real binary, SIGSTOP then SIGCONT) says that a sample was taken
// while it was not running and leaves it out: its maximum is not the
// stop; its raw file marks the sample, and analyze judges the file alike.
func TestMeasureLeavesOutAJobControlStop(t *testing.T) {
	dir := t.TempDir()
	raw := filepath.Join(dir, "run.json")
	cmd := exec.Command("tickscope", "measure", "--samples", "400", "--json", "--raw", raw)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer cmd.Process.Kill()

	// The events: a thread of it waits in clock_nanosleep(CLOCK_MONOTONIC,
	// TIMER_ABSTIME), which only clock-abs's loop calls (Go's runtime
	// sleeps with nanosleep and futex), then that thread has gone to sleep
	// 10 times more, so the loop is past its 5 waits of warm-up.
	var tid string
	until(t, "a thread of tickscope in clock-abs's wait", func() bool { tid = inClockAbs(pid); return tid != "" })
	first := switches(pid, tid)
	until(t, "10 waits of the measuring thread", func() bool { return switches(pid, tid) >= first+10 })
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	until(t, "tickscope stopped", func() bool { return state(pid) == "T" })
	time.Sleep(300 * time.Millisecond) // the stop measured
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("measure: %v\n%s", err, stderr.String())
	}

	var m struct {
		Stopped    bool `json:"stopped"`
		NotRunning *struct {
			LeftOut     int   `json:"left_out"`
			Continued   int   `json:"continued"`
			SuspendedNs int64 `json:"suspended_ns"`
		} `json:"not_running"`
		Summary struct {
			Count int   `json:"count"`
			Max   int64 `json:"max_ns"`
		} `json:"summary"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &m); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	// The stop holds up the wait it fell in, which is left out; one that
	// fell in the loop's work between two waits (before the clock read a
	// wait's deadline follows) holds up none, and is counted only. The
	// machine may also be suspended meanwhile, which tickscope tells and
	// leaves out too (a virtual machine paused by its host: CLOCK_BOOTTIME
	// moved 4 ms away from CLOCK_MONOTONIC in one CI run here): each
	// sample it marked added more than SuspendSlackNs to suspended_ns.
	if m.NotRunning == nil || m.NotRunning.Continued != 1 {
		t.Fatalf("not_running %+v, want 1 continue:\n%s", m.NotRunning, stdout.String())
	}
	suspends := int(m.NotRunning.SuspendedNs / sample.SuspendSlackNs)
	if m.NotRunning.LeftOut > 1+suspends {
		t.Fatalf("not_running %+v, want at most 1 sample left out for the stop and %d for the suspends:\n%s", m.NotRunning, suspends, stdout.String())
	}
	if m.Stopped || m.Summary.Count != 400-m.NotRunning.LeftOut || m.Summary.Max >= int64(300*time.Millisecond) {
		t.Errorf("stopped %v, %d samples, max %d ns; want %d samples whose max is not the 300 ms stop", m.Stopped, m.Summary.Count, m.Summary.Max, 400-m.NotRunning.LeftOut)
	}
	if !strings.Contains(strings.Join(m.Warnings, "\n"), "not running") {
		t.Errorf("no warning says the process was not running: %q", m.Warnings)
	}

	data, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Points []struct {
			NotRunning struct {
				Samples   []int `json:"samples"`
				Continued int   `json:"continued"`
			} `json:"not_running"`
			Latencies []int64 `json:"latencies_ns"`
		} `json:"points"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	nr := f.Points[0].NotRunning
	if len(nr.Samples) != m.NotRunning.LeftOut || nr.Continued != 1 || suspends == 0 && len(nr.Samples) == 1 && f.Points[0].Latencies[nr.Samples[0]] < int64(300*time.Millisecond) {
		t.Errorf("the raw file marks %v (continued %d), want the one sample over the 300 ms stop, if any", nr.Samples, nr.Continued)
	}
	if len(nr.Samples) == 0 && slices.Max(f.Points[0].Latencies) >= int64(300*time.Millisecond) {
		t.Errorf("no sample marked, but one is over the 300 ms stop")
	}
	analyzed, err := exec.Command("tickscope", "analyze", raw, "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		NotRunning json.RawMessage `json:"not_running"`
		Summary    json.RawMessage `json:"summary"`
	}
	if err := json.Unmarshal(analyzed, &a); err != nil {
		t.Fatal(err)
	}
	var mm struct {
		NotRunning json.RawMessage `json:"not_running"`
		Summary    json.RawMessage `json:"summary"`
	}
	json.Unmarshal(stdout.Bytes(), &mm)
	if !bytes.Equal(a.Summary, mm.Summary) || !bytes.Equal(a.NotRunning, mm.NotRunning) {
		t.Errorf("analyze judged the file otherwise:\n%s %s\nmeasure:\n%s %s", a.NotRunning, a.Summary, mm.NotRunning, mm.Summary)
	}
}

// until waits for cond, failing after 30 s.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(200 * time.Microsecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s in 30 s", what)
		}
	}
}

// inClockAbs returns the thread of pid that is in clock_nanosleep with
// CLOCK_MONOTONIC and TIMER_ABSTIME (/proc/PID/task/TID/syscall: the
// number and the arguments), "" for none.
func inClockAbs(pid int) string {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	want := fmt.Sprintf("%d 0x%x 0x%x ", unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME)
	for _, task := range tasks {
		data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/syscall", pid, task.Name()))
		if strings.HasPrefix(string(data), want) {
			return task.Name()
		}
	}
	return ""
}

// switches is the voluntary context switches of thread tid of pid: one
// for each wait that slept.
func switches(pid int, tid string) int {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, tid))
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// state is the state letter of /proc/PID/stat.
func state(pid int) string {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+3 <= len(s) {
		return s[i+2 : i+3]
	}
	return ""
}
