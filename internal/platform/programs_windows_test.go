package platform

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A process id the last scan knew, now another process's of the same
// image name (stood for here by this process, with the start time of an
// earlier one), is told afresh: its own start time is reported, not the
// earlier process's.
func TestScanTellsAReusedProcessID(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(exe)
	scanner, err := system{}.ScanPrograms([]string{name})
	if err != nil {
		t.Fatal(err)
	}
	defer scanner.Close()
	first, err := scanner.Scan()
	if err != nil {
		t.Fatal(err)
	}
	pid := os.Getpid()
	var started time.Time
	for _, p := range first {
		if p.PID == pid {
			started = p.Started
		}
	}
	if started.IsZero() {
		t.Fatalf("the first scan did not find this process (%s, %d) with its start time: %+v", name, pid, first)
	}
	sc := scanner.(*snapshotScanner)
	was := sc.known[uint32(pid)]
	was.started = started.Add(-time.Hour)
	sc.known[uint32(pid)] = was
	again, err := scanner.Scan()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range again {
		if p.PID == pid && !p.Started.Equal(started) {
			t.Errorf("the process with id %d reported as started at %v, the earlier process's; its own start is %v", pid, p.Started, started)
		}
	}
}
