package platform

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/seam"
)

func TestAppendDirentPIDs(t *testing.T) {
	var buf []byte
	record := func(name string, typ byte) {
		reclen := (19 + len(name) + 1 + 7) &^ 7
		r := make([]byte, reclen)
		binary.LittleEndian.PutUint16(r[16:], uint16(reclen))
		r[18] = typ
		copy(r[19:], name)
		buf = append(buf, r...)
	}
	const dtDir, dtReg = 4, 8
	record("1", dtDir)
	record("self", 10)
	record("4242", dtDir)
	record("017", dtDir)     // not how the kernel names a process
	record("99", dtReg)      // not a directory
	record("12a", dtDir)     // not a number
	record("4194304", dtDir) // PID_MAX_LIMIT
	record("99999999999", dtDir)
	got := appendDirentPIDs(nil, buf)
	if want := []int{1, 4242, 4194304}; !slices.Equal(got, want) {
		t.Errorf("pids %v, want %v", got, want)
	}
	// A record cut short ends the parse, it does not read past the buffer.
	if got := appendDirentPIDs(nil, buf[:30]); !slices.Equal(got, []int{1}) {
		t.Errorf("a cut buffer gave %v", got)
	}
}

func TestParseProcStat(t *testing.T) {
	boot := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	line := "4242 (my (odd) game) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 4 0 12345 1000 100 18446744073709551615\n"
	st, err := parseProcStat([]byte(line), boot)
	if err != nil {
		t.Fatal(err)
	}
	if st.state != 'S' || st.flags != 4194560 || !st.started.Equal(boot.Add(123450*time.Millisecond)) {
		t.Errorf("parsed %+v", st)
	}
	kthread := "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 1 0 0"
	if st, err := parseProcStat([]byte(kthread), boot); err != nil || st.flags&pfKthread == 0 {
		t.Errorf("kthreadd: %+v, %v", st, err)
	}
	for _, bad := range []string{"", "4242 game S 1", "4242 (game) S 1 2 3", "4242 (game) S 1 2 3 4 5 x 7 8 9 10 11 12 13 14 15 16 17 18 19 20"} {
		if _, err := parseProcStat([]byte(bad), boot); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// program copies sleep(1) to dir/name, a program no other process on the
// machine runs.
func program(t *testing.T, dir, name string) string {
	t.Helper()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep(1)")
	}
	data, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func scanFor(t *testing.T, sc seam.ProgramScanner) map[int]seam.ProgramProcess {
	t.Helper()
	found, err := sc.Scan()
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]seam.ProgramProcess{}
	for _, p := range found {
		out[p.PID] = p
	}
	return out
}

// TestScanPrograms runs programs of unique names and finds them in the
// real /proc by name, by a name longer than comm holds, and by path; a
// process that execs one is found once it has; an exited one (a zombie
// first, then reaped) is not.
func TestScanPrograms(t *testing.T) {
	dir := t.TempDir()
	short := program(t, dir, "tsw"+strconv.Itoa(os.Getpid()))
	long := program(t, dir, "tickscope-while-test-program")
	byPath := program(t, dir, "tswpath")
	sc, err := system{}.ScanPrograms([]string{filepath.Base(short), filepath.Base(long), byPath})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	if found := scanFor(t, sc); len(found) != 0 {
		t.Fatalf("before any started: %v", found)
	}
	start := func(path string, args ...string) *exec.Cmd {
		cmd := exec.Command(path, args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	before := time.Now()
	a := start(short, "30")
	b := start(long, "30")
	c := start(byPath, "30")
	// Another program of the same base name but another path is not the
	// program named by its path.
	other := program(t, t.TempDir(), "tswpath")
	d := start(other, "30")
	// A shell that execs the program later keeps its process id.
	e := start("/bin/sh", "-c", "sleep 0.5; exec "+short+" 30")
	time.Sleep(100 * time.Millisecond)
	found := scanFor(t, sc)
	for cmd, program := range map[*exec.Cmd]int{a: 0, b: 1, c: 2} {
		p, ok := found[cmd.Process.Pid]
		if !ok || p.Program != program {
			t.Errorf("process %d of program %d: found %+v, %v", cmd.Process.Pid, program, p, ok)
			continue
		}
		// /proc's start time counts in 10 ms ticks.
		if p.Started.Before(before.Add(-20*time.Millisecond)) || p.Started.After(time.Now()) {
			t.Errorf("process %d started %v, want between %v and now", cmd.Process.Pid, p.Started, before)
		}
	}
	if _, ok := found[d.Process.Pid]; ok {
		t.Errorf("the program at %s matched %s", other, byPath)
	}
	if _, ok := found[e.Process.Pid]; ok {
		t.Errorf("the shell matched before it executed the program")
	}
	if len(found) != 3 {
		t.Errorf("found %v, want 3 processes", found)
	}
	time.Sleep(time.Second)
	if p, ok := scanFor(t, sc)[e.Process.Pid]; !ok || p.Program != 0 {
		t.Errorf("the shell that executed the program is not found as it: %+v, %v", p, ok)
	}
	// Exited but not yet reaped (a zombie), then reaped.
	a.Process.Kill()
	time.Sleep(100 * time.Millisecond)
	if _, ok := scanFor(t, sc)[a.Process.Pid]; ok {
		t.Errorf("a zombie is listed as running")
	}
	a.Wait()
	if _, ok := scanFor(t, sc)[a.Process.Pid]; ok {
		t.Errorf("an exited process is listed as running")
	}
	if _, ok := scanFor(t, sc)[b.Process.Pid]; !ok {
		t.Errorf("a running process is no longer found")
	}
}

// BenchmarkScanPrograms is one scan of this machine's /proc by a scanner
// that has seen every process before, as a waiting holder's scans are.
func BenchmarkScanPrograms(b *testing.B) {
	sc, err := system{}.ScanPrograms([]string{"while-bench-absent", "/opt/while-bench/absent"})
	if err != nil {
		b.Fatal(err)
	}
	defer sc.Close()
	if _, err := sc.Scan(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := sc.Scan(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(sc.(*procScanner).entries)), "processes")
}

// TestScanSeesAnOldProcessExec: a process that has run for longer than
// youngScans scans and then executes the program keeps its id; the scan
// that re-reads its comm in turn finds it, within rotateScans scans.
func TestScanSeesAnOldProcessExec(t *testing.T) {
	dir := t.TempDir()
	prog := program(t, dir, "tswold"+strconv.Itoa(os.Getpid()))
	sc, err := system{}.ScanPrograms([]string{filepath.Base(prog)})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	marker := filepath.Join(dir, "go")
	shell := exec.Command("/bin/sh", "-c", `while [ ! -e "$1" ]; do sleep 0.05; done; exec "$0" 30`, prog, marker)
	if err := shell.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { shell.Process.Kill(); shell.Wait() }()
	time.Sleep(100 * time.Millisecond)
	for range youngScans + 1 {
		if _, ok := scanFor(t, sc)[shell.Process.Pid]; ok {
			t.Fatal("the shell matched before it executed the program")
		}
	}
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	for n := 1; ; n++ {
		if p, ok := scanFor(t, sc)[shell.Process.Pid]; ok {
			if p.Program != 0 {
				t.Errorf("found as program %d", p.Program)
			}
			t.Logf("found at the %d. scan after it executed the program", n)
			break
		}
		if n == rotateScans {
			t.Fatalf("not found %d scans after it executed the program", n)
		}
	}
}

// TestScanListsProcAfterACreation: /proc is listed again only when the
// last process id has changed (at that scan or the one before), or every
// fullScanEvery scans.
func TestScanListsProcAfterACreation(t *testing.T) {
	sc, err := newProcScanner("/proc", []string{"tickscope-absent"})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	sc.Scan()
	if sc.lastFull != 1 {
		t.Fatalf("the first scan did not list /proc")
	}
	// A process created now changes the last process id: the next two
	// scans list /proc.
	if err := exec.Command("true").Run(); err != nil {
		t.Skip(err)
	}
	sc.Scan()
	sc.Scan()
	if sc.lastFull != 3 {
		t.Errorf("after a process was created, /proc was last listed at scan %d, want 3", sc.lastFull)
	}
	// This machine is shared: a process anyone creates lists /proc again.
	// At most fullScanEvery scans pass without a listing.
	for range 3 * fullScanEvery {
		sc.Scan()
		if sc.scan-sc.lastFull >= fullScanEvery {
			t.Fatalf("scan %d: /proc last listed at scan %d", sc.scan, sc.lastFull)
		}
	}
}
