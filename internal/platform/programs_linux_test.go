package platform

import (
	"errors"
	"io"
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

	"github.com/tickscope/tickscope/internal/seam"
)

// TestReadPIDs lists a directory as /proc is listed: getdents records read
// by unix.ParseDirent, in the machine's byte order, and the names that are
// process ids kept.
func TestReadPIDs(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"1", "self", "4242", "017", "12a", "4194304", "99999999999", "sys"} {
		if err := os.Mkdir(filepath.Join(root, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sc, err := newProcScanner(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	// A buffer too small for every record at once: several getdents calls.
	sc.buf = make([]byte, 64)
	got, err := sc.readPIDs()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if want := []int{1, 4242, 4194304}; !slices.Equal(got, want) {
		t.Errorf("pids %v, want %v", got, want)
	}
}

func TestParseProcStat(t *testing.T) {
	boot := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	line := "4242 (my (odd) game) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 4 0 12345 1000 100 18446744073709551615\n"
	st, err := parseProcStat([]byte(line), boot)
	if err != nil {
		t.Fatal(err)
	}
	if st.state != 'S' || st.flags != 4194560 || st.threads != 4 || !st.started.Equal(boot.Add(123450*time.Millisecond)) {
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
	return copyProgram(t, "sleep", dir, name)
}

// copyProgram copies the program of that name in PATH to dir/name.
func copyProgram(t *testing.T, from, dir, name string) string {
	t.Helper()
	src, err := exec.LookPath(from)
	if err != nil {
		t.Skipf("no %s", from)
	}
	data, err := os.ReadFile(src)
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

// poll calls done until it reports true, failing the test at a deadline.
func poll(t *testing.T, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s, still not %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// procField reads /proc/PID/NAME ("exe" as its link), "" when it cannot.
func procField(pid int, name string) string {
	path := "/proc/" + strconv.Itoa(pid) + "/" + name
	if name == "exe" {
		link, _ := os.Readlink(path)
		return link
	}
	data, _ := os.ReadFile(path)
	return strings.TrimSuffix(string(data), "\n")
}

// procState is the state letter of /proc/PID/stat, 0 when unreadable.
func procState(pid int) byte {
	stat := procField(pid, "stat")
	if end := strings.LastIndexByte(stat, ')'); end >= 0 && end+2 < len(stat) {
		return stat[end+2]
	}
	return 0
}

func start(t *testing.T, path string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(path, args...)
	if err := cmd.Start(); err != nil {
		skipIfNoExec(t, err)
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
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
	before := time.Now()
	a := start(t, short, "30")
	b := start(t, long, "30")
	c := start(t, byPath, "30")
	// Another program of the same base name but another path is not the
	// program named by its path.
	other := program(t, t.TempDir(), "tswpath")
	d := start(t, other, "30")
	// A shell that execs the program later keeps its process id.
	marker := filepath.Join(dir, "exec")
	e := start(t, "/bin/sh", "-c", `while [ ! -e "$0" ]; do sleep 0.05; done; exec "$1" 30`, marker, short)
	var found map[int]seam.ProgramProcess
	poll(t, "found the three programs", func() bool {
		found = scanFor(t, sc)
		_, okA := found[a.Process.Pid]
		_, okB := found[b.Process.Pid]
		_, okC := found[c.Process.Pid]
		return okA && okB && okC
	})
	for cmd, program := range map[*exec.Cmd]int{a: 0, b: 1, c: 2} {
		p := found[cmd.Process.Pid]
		if p.Program != program {
			t.Errorf("process %d of program %d: found %+v", cmd.Process.Pid, program, p)
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
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	poll(t, "found the shell that executed the program, as it", func() bool {
		p, ok := scanFor(t, sc)[e.Process.Pid]
		return ok && p.Program == 0
	})
	// Exited but not yet reaped (a zombie), then reaped.
	a.Process.Kill()
	poll(t, "a zombie", func() bool { return procState(a.Process.Pid) == 'Z' })
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

// TestScanKeepsARenamedProcess: a process that renames itself (its comm,
// as prctl(PR_SET_NAME) and Wine's SetThreadDescription do) still runs
// its program and stays found; once it executes another program, it is
// not found.
func TestScanKeepsARenamedProcess(t *testing.T) {
	dir := t.TempDir()
	// A copy of the shell under a unique name runs the script: it renames
	// itself (the redirection is the shell's own write to its comm), then
	// executes sleep(1).
	shell := copyProgram(t, "sh", dir, "tswren"+strconv.Itoa(os.Getpid()))
	rename, execute := filepath.Join(dir, "rename"), filepath.Join(dir, "exec")
	script := `while [ ! -e "$0" ]; do sleep 0.05; done; printf renamed > /proc/$$/comm
while [ ! -e "$1" ]; do sleep 0.05; done; exec sleep 30`
	sc, err := system{}.ScanPrograms([]string{filepath.Base(shell)})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	cmd := start(t, shell, "-c", script, rename, execute)
	pid := cmd.Process.Pid
	poll(t, "found the program", func() bool { _, ok := scanFor(t, sc)[pid]; return ok })
	if err := os.WriteFile(rename, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	poll(t, "renamed", func() bool { return procField(pid, "comm") == "renamed" })
	for range rotateScans + 1 {
		if _, ok := scanFor(t, sc)[pid]; !ok {
			t.Fatal("a process that renamed itself is no longer found")
		}
	}
	if err := os.WriteFile(execute, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	poll(t, "executed sleep", func() bool { return procField(pid, "comm") == "sleep" })
	if p, ok := scanFor(t, sc)[pid]; ok {
		t.Errorf("a process that executed another program is still found: %+v", p)
	}
}

// TestScanFindsALinksTarget: a program named by a link's path is found
// when started by its link and when started by the link's target, whose
// base name (and so comm) differs.
func TestScanFindsALinksTarget(t *testing.T) {
	dir := t.TempDir()
	target := program(t, dir, "tswtarget-bin")
	link := filepath.Join(dir, "tswlink")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	sc, err := system{}.ScanPrograms([]string{link})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	byTarget := start(t, target, "30")
	byLink := start(t, link, "30")
	poll(t, "found both", func() bool {
		found := scanFor(t, sc)
		_, okTarget := found[byTarget.Process.Pid]
		_, okLink := found[byLink.Process.Pid]
		return okTarget && okLink
	})
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
	shell := start(t, "/bin/sh", "-c", `while [ ! -e "$1" ]; do sleep 0.05; done; exec "$0" 30`, prog, marker)
	for range youngScans + 1 {
		if _, ok := scanFor(t, sc)[shell.Process.Pid]; ok {
			t.Fatal("the shell matched before it executed the program")
		}
	}
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	poll(t, "executed the program", func() bool { return procField(shell.Process.Pid, "exe") == prog })
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

// TestBootTimeHasNoMonotonicReading: a start time made from the boot time
// is compared with time.Now by the wall clock, which counts a suspend as
// CLOCK_BOOTTIME and /proc's start times do; with a monotonic reading
// (CLOCK_MONOTONIC, which stops during a suspend) Sub would use that.
func TestBootTimeHasNoMonotonicReading(t *testing.T) {
	now := time.Now()
	boot := bootTimeAt(now, time.Hour)
	if strings.Contains(boot.String(), "m=") {
		t.Errorf("the boot time %v keeps a monotonic reading", boot)
	}
	if !boot.Equal(now.Add(-time.Hour)) {
		t.Errorf("boot %v, want an hour before %v", boot, now)
	}
	started := boot.Add(30 * time.Minute)
	if strings.Contains(started.String(), "m=") {
		t.Errorf("a start time %v keeps a monotonic reading", started)
	}
}

// TestScanTellsAPathByItsFile: a program named by its path is the file
// at that path, not what another user's mount namespace shows there. As
// nobody, in a user and mount namespace of its own (unshare -Urm), a copy
// of sleep bind-mounted over the watched path and executed there shows
// the watched path as its /proc/PID/exe and the path's base name as its
// comm: it is not the program. The program itself, run by nobody too, is.
func TestScanTellsAPathByItsFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: runs processes as nobody")
	}
	for _, tool := range []string{"setpriv", "unshare"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	// A directory nobody may enter, holding the watched program (root's)
	// and nobody's own copy of sleep.
	dir, err := os.MkdirTemp("", "tswfile")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	watched := program(t, dir, "tswfile"+strconv.Itoa(os.Getpid()))
	fake := program(t, dir, "fake")
	if err := os.Chown(fake, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	asNobody := []string{"--reuid=65534", "--regid=65534", "--clear-groups"}
	if out, err := exec.Command("setpriv", append(asNobody, "unshare", "-Urm", "true")...).CombinedOutput(); err != nil {
		t.Skipf("nobody cannot make a user and mount namespace here: %v: %s", err, out)
	}
	sc, err := system{}.ScanPrograms([]string{watched})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	faked := start(t, "setpriv", append(asNobody, "unshare", "-Urm", "sh", "-c", `mount --bind "$0" "$1" && exec "$1" 30`, fake, watched)...)
	poll(t, "the fake executed at the watched path", func() bool {
		return procField(faked.Process.Pid, "exe") == watched && procField(faked.Process.Pid, "comm") == filepath.Base(watched)
	})
	real := start(t, "setpriv", append(asNobody, watched, "30")...)
	poll(t, "found the program", func() bool { _, ok := scanFor(t, sc)[real.Process.Pid]; return ok })
	// Young processes are read at every scan: the fake is looked at as
	// often as the program.
	for range youngScans {
		if p, ok := scanFor(t, sc)[faked.Process.Pid]; ok {
			t.Fatalf("a file bind-mounted over %s in another user's namespace counts as it: %+v", watched, p)
		}
	}
}

// TestScanFollowsAnUpdatedProgram: a program named by its path whose file
// is replaced after the scanner started (an update: a new file renamed
// over the old) is the new file.
func TestScanFollowsAnUpdatedProgram(t *testing.T) {
	dir := t.TempDir()
	watched := program(t, dir, "tswupd"+strconv.Itoa(os.Getpid()))
	sc, err := system{}.ScanPrograms([]string{watched})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	update := program(t, dir, "update")
	if err := os.Rename(update, watched); err != nil {
		t.Fatal(err)
	}
	cmd := start(t, watched, "30")
	poll(t, "found the updated program", func() bool { _, ok := scanFor(t, sc)[cmd.Process.Pid]; return ok })
}

// TestScanKeepsAProgramRunningWhileItIsUpdated: a process of a program
// named by its path, found before the path's file was replaced (an
// update while the program runs), still runs it when it renames itself
// (Wine renames threads often), also after a process of the new file was
// found, which has the scanner read the path's file again.
func TestScanKeepsAProgramRunningWhileItIsUpdated(t *testing.T) {
	dir := t.TempDir()
	watched := copyProgram(t, "sh", dir, "tswupr"+strconv.Itoa(os.Getpid()))
	sc, err := system{}.ScanPrograms([]string{watched})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	marker := filepath.Join(dir, "rename")
	old := renamer(t, watched, marker).Process.Pid
	poll(t, "found the program", func() bool { _, ok := scanFor(t, sc)[old]; return ok })
	update := program(t, dir, "update")
	if err := os.Rename(update, watched); err != nil {
		t.Fatal(err)
	}
	updated := start(t, watched, "30").Process.Pid
	poll(t, "found the updated program", func() bool { _, ok := scanFor(t, sc)[updated]; return ok })
	rename(t, old, marker)
	for range 3 {
		found := scanFor(t, sc)
		if _, ok := found[old]; !ok {
			t.Fatalf("the process found before its program was updated is gone once it renamed itself: %v", found)
		}
		if _, ok := found[updated]; !ok {
			t.Fatalf("the updated program's process is gone: %v", found)
		}
	}
}

// TestScanTellsWhoStartedAProcess: a process found carries the real user
// id of whoever started it (--while-user counts only one user's).
func TestScanTellsWhoStartedAProcess(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: runs a process as nobody")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("no setpriv")
	}
	dir, err := os.MkdirTemp("", "tswuid")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	prog := program(t, dir, "tswuid"+strconv.Itoa(os.Getpid()))
	sc, err := system{}.ScanPrograms([]string{filepath.Base(prog)})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	nobody := start(t, "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", prog, "30")
	mine := start(t, prog, "30")
	var found map[int]seam.ProgramProcess
	poll(t, "found both", func() bool {
		found = scanFor(t, sc)
		_, a := found[nobody.Process.Pid]
		_, b := found[mine.Process.Pid]
		return a && b
	})
	if uid := found[nobody.Process.Pid].UID; uid != 65534 {
		t.Errorf("nobody's process: uid %d, want 65534", uid)
	}
	if uid := found[mine.Process.Pid].UID; uid != 0 {
		t.Errorf("root's process: uid %d, want 0", uid)
	}
}

// dropsToNobody is a program that, once a byte arrives on its stdin,
// sets its user ids to nobody's (65534) without executing anything, says
// so on stdout, and exits when its stdin closes: a launcher started by
// root that drops to a user's id.
const dropsToNobody = `#include <stdio.h>
#include <unistd.h>
int main(void) {
	char c;
	if (read(0, &c, 1) != 1)
		return 1;
	if (setuid(65534) != 0) {
		perror("setuid");
		return 1;
	}
	printf("dropped\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0) {
	}
	return 0;
}
`

// TestScanSeesAProcessChangeItsUser: a process found carries its real
// user id as it is at each scan, not as it was when found: a launcher
// that root started and that then drops to a user's id is that user's.
func TestScanSeesAProcessChangeItsUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: its program sets its user id")
	}
	prog := build(t, dropsToNobody, "tswdrop"+strconv.Itoa(os.Getpid()))
	sc, err := system{}.ScanPrograms([]string{filepath.Base(prog)})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	cmd := exec.Command(prog)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pid := cmd.Process.Pid
	var p seam.ProgramProcess
	poll(t, "found the program", func() bool {
		var ok bool
		p, ok = scanFor(t, sc)[pid]
		return ok
	})
	if p.UID != 0 {
		t.Fatalf("root's process: uid %d, want 0", p.UID)
	}
	if _, err := stdin.Write([]byte{'\n'}); err != nil {
		t.Fatal(err)
	}
	line := make([]byte, len("dropped\n"))
	if _, err := io.ReadFull(stdout, line); err != nil {
		t.Fatalf("the program did not drop to nobody: %v", err)
	}
	p, ok := scanFor(t, sc)[pid]
	if !ok {
		t.Fatal("the process that dropped to nobody's user id is no longer found")
	}
	if p.UID != 65534 {
		t.Errorf("the process dropped to nobody: uid %d, want 65534", p.UID)
	}
}

// build compiles the C program src as dir/name with gcc, skipping the
// test without it.
func build(t *testing.T, src, name string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc to build the test's program")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, name+".c")
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, name)
	if out, err := exec.Command(gcc, "-O", "-pthread", "-o", prog, file).CombinedOutput(); err != nil {
		t.Skipf("gcc cannot build it here: %v: %s", err, out)
	}
	return prog
}

func TestParseStatusUID(t *testing.T) {
	for status, want := range map[string]int{
		"Name:\tgame\nUid:\t1000\t0\t0\t0\nGid:\t100\t100\t100\t100\n": 1000,
		"Name:\tgame\n": -1,
		"Uid:\tx\n":     -1,
		"Uid:\n":        -1,
	} {
		if got := parseStatusUID([]byte(status)); got != want {
			t.Errorf("%q: %d, want %d", status, got, want)
		}
	}
}

// leaderExits is a program whose main thread ends with pthread_exit while
// another runs on: it says so on stdout, once the main thread has gone,
// and exits when its stdin closes.
const leaderExits = `#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static pthread_t main_thread;
static void *run(void *arg) {
	(void)arg;
	pthread_join(main_thread, NULL);
	printf("main exited\n");
	fflush(stdout);
	char c;
	while (read(0, &c, 1) > 0) {
	}
	return NULL;
}
int main(void) {
	main_thread = pthread_self();
	pthread_t t;
	pthread_create(&t, NULL, run, NULL);
	pthread_exit(NULL);
}
`

// TestScanKeepsAProgramWhoseMainThreadExited: a process whose main thread
// has exited (its leader a zombie) while another thread runs still runs
// its program, found by name and by path, by a scanner that found it
// before and by one that first sees it then; once its last thread has
// exited it has (a zombie, then reaped).
func TestScanKeepsAProgramWhoseMainThreadExited(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc to build a program whose main thread exits first (Go cannot pthread_exit its main thread)")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "leader.c")
	if err := os.WriteFile(src, []byte(leaderExits), 0o600); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, "tswlead"+strconv.Itoa(os.Getpid()))
	if out, err := exec.Command(gcc, "-O", "-pthread", "-o", prog, src).CombinedOutput(); err != nil {
		t.Skipf("gcc cannot build it here: %v: %s", err, out)
	}
	byName := []string{filepath.Base(prog)}
	byPath := []string{prog}
	before := make([]seam.ProgramScanner, 2)
	for i, programs := range [][]string{byName, byPath} {
		if before[i], err = (system{}).ScanPrograms(programs); err != nil {
			t.Fatal(err)
		}
		defer before[i].Close()
	}
	cmd := exec.Command(prog)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pid := cmd.Process.Pid
	for _, sc := range before {
		poll(t, "found the program", func() bool { _, ok := scanFor(t, sc)[pid]; return ok })
	}
	line := make([]byte, len("main exited\n"))
	if _, err := io.ReadFull(stdout, line); err != nil {
		t.Fatalf("the program did not say its main thread exited: %v", err)
	}
	poll(t, "a zombie leader", func() bool { return procState(pid) == 'Z' })
	if threads := procStatusField(pid, "Threads"); threads != "2" {
		t.Fatalf("threads %q, want 2", threads)
	}
	for i, programs := range [][]string{byName, byPath} {
		if _, ok := scanFor(t, before[i])[pid]; !ok {
			t.Errorf("%v: a process whose main thread exited, found before, is gone", programs)
		}
		fresh, err := system{}.ScanPrograms(programs)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := scanFor(t, fresh)[pid]; !ok {
			t.Errorf("%v: a process whose main thread exited is not found", programs)
		}
		fresh.Close()
	}
	// The last thread exits: a zombie of one thread has exited.
	stdin.Close()
	poll(t, "the last thread exited", func() bool { return procState(pid) == 'Z' && procStatusField(pid, "Threads") == "1" })
	for i, programs := range [][]string{byName, byPath} {
		if p, ok := scanFor(t, before[i])[pid]; ok {
			t.Errorf("%v: a process that has exited is found: %+v", programs, p)
		}
	}
}

// procStatusField is a field of /proc/PID/status ("Threads"), "" when it
// cannot be read.
func procStatusField(pid int, name string) string {
	for line := range strings.SplitSeq(procField(pid, "status"), "\n") {
		if value, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(value)
		}
	}
	return ""
}

// lowerDescriptorLimit sets RLIMIT_NOFILE's soft limit to soft for the
// rest of the test.
func lowerDescriptorLimit(t *testing.T, soft uint64) {
	t.Helper()
	var was unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &was); err != nil {
		t.Fatal(err)
	}
	low := was
	low.Cur = soft
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Setrlimit(unix.RLIMIT_NOFILE, &was) })
}

// idle starts n idle processes (one shell's children, so that this
// process keeps no descriptor for each), ended with the test.
func idle(t *testing.T, n int) {
	t.Helper()
	shell := exec.Command("/bin/sh", "-c", `i=0; while [ $i -lt "$0" ]; do sleep 60 & i=$((i+1)); done; echo started; wait`, strconv.Itoa(n))
	shell.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := shell.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := shell.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-shell.Process.Pid, syscall.SIGKILL); shell.Wait() })
	line := make([]byte, len("started\n"))
	if _, err := io.ReadFull(out, line); err != nil {
		t.Fatalf("the idle processes did not start: %v", err)
	}
	out.Close()
}

// TestScanUnderALowDescriptorLimit: under `ulimit -n 64`, with 150 other
// processes running, the scanner keeps no more descriptors than its limit
// leaves room for, and finds the program started after them.
func TestScanUnderALowDescriptorLimit(t *testing.T) {
	dir := t.TempDir()
	prog := program(t, dir, "tswfd"+strconv.Itoa(os.Getpid()))
	idle(t, 150)
	lowerDescriptorLimit(t, 64)
	sc, err := system{}.ScanPrograms([]string{filepath.Base(prog)})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	if kept := sc.(*procScanner).maxKept; kept != 16 {
		t.Errorf("under a limit of 64 the scanner keeps up to %d descriptors, want 16", kept)
	}
	cmd := start(t, prog, "30")
	poll(t, "found the program", func() bool { _, ok := scanFor(t, sc)[cmd.Process.Pid]; return ok })
	// Every process has had its comm read by now (the first scan reads
	// them all): the bound is what was kept, not only what was allowed.
	ps := sc.(*procScanner)
	if len(ps.entries) < 150 {
		t.Fatalf("the scanner saw %d processes, want the 150 idle ones at least", len(ps.entries))
	}
	open := 0
	for _, e := range ps.entries {
		if e.comm >= 0 {
			open++
		}
	}
	if ps.kept > 16 || open != ps.kept {
		t.Errorf("after scanning %d processes the scanner keeps %d comm descriptors (counted %d), want at most 16", len(ps.entries), open, ps.kept)
	}
}

// TestScanFailsWithoutDescriptors: a scan that cannot open what it must
// read, for want of descriptors (EMFILE), fails, saying so; it does not
// read the processes as gone.
//
// Its words do not change with the descriptors the scanner keeps (which
// change as processes come and go): a hold would say it at every scan.
func TestScanFailsWithoutDescriptors(t *testing.T) {
	dir := t.TempDir()
	prog := program(t, dir, "tswnofd"+strconv.Itoa(os.Getpid()))
	cmd := start(t, prog, "30")
	sc, err := system{}.ScanPrograms([]string{filepath.Base(prog)})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	sc.(*procScanner).maxKept = 0
	poll(t, "found the program", func() bool { _, ok := scanFor(t, sc)[cmd.Process.Pid]; return ok })
	// The lowest descriptor free is the limit: no open succeeds.
	free, err := unix.Dup(0)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(free)
	lowerDescriptorLimit(t, uint64(free))
	found, err := sc.Scan()
	if !errors.Is(err, unix.EMFILE) {
		t.Errorf("a scan without descriptors: %v, %v; want EMFILE", found, err)
	}
	if err != nil && !strings.Contains(err.Error(), "/PID ") {
		t.Errorf("the error %q names one process: a hold would say it at every scan", err)
	}
	ps := sc.(*procScanner)
	ps.kept++
	again, err2 := sc.Scan()
	if err != nil && (err2 == nil || err2.Error() != err.Error()) {
		t.Errorf("the scan after, with another count of descriptors kept: %v, %v; want %q", again, err2, err)
	}
	ps.kept--
}

// renamer starts a copy of the shell at path that renames itself (its
// comm) to "renamed" once the file at marker exists, then runs on.
func renamer(t *testing.T, path, marker string) *exec.Cmd {
	t.Helper()
	return start(t, path, "-c", `while [ ! -e "$0" ]; do sleep 0.05; done; printf renamed > /proc/$$/comm; sleep 30`, marker)
}

// rename has the process of renamer rename itself, and waits until it has.
func rename(t *testing.T, pid int, marker string) {
	t.Helper()
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	poll(t, "renamed", func() bool { return procField(pid, "comm") == "renamed" })
}

// TestScanFailsWhenAReadRunsOutOfResources: a read a scan makes of a
// process found that fails for want of descriptors or memory (EMFILE,
// ENOMEM) fails the scan; it does not end the match, as if the process
// had exited (a hold would release the setting while it runs), nor is it
// read as a process not running the program: the task list read for a
// process whose /proc/PID/exe reads ENOENT (its main thread exited) and
// the stat of its executable, read again when its comm changes, and its
// status, read for its user when it is found and at every scan after.
// The failure reads the same whichever file it was, at each scan: a hold
// says it again when its words change.
func TestScanFailsWhenAReadRunsOutOfResources(t *testing.T) {
	dir := t.TempDir()
	shell := copyProgram(t, "sh", dir, "tswres"+strconv.Itoa(os.Getpid()))
	said := map[unix.Errno]string{}
	for _, tt := range []struct {
		name string
		// fail makes the scanner's reads of process pid fail: after the
		// process was found and renamed itself, or, atMatch, before it
		// is found.
		fail    func(sc *procScanner, pid int)
		want    unix.Errno
		atMatch bool
	}{
		{"the task list", func(sc *procScanner, pid int) {
			exe := "/proc/" + strconv.Itoa(pid) + "/exe"
			sc.statPath = func(path string, st *unix.Stat_t) error {
				if path == exe {
					return unix.ENOENT
				}
				return unix.Stat(path, st)
			}
			sc.readDir = func(string) ([]os.DirEntry, error) {
				return nil, &os.PathError{Op: "open", Path: "task", Err: unix.EMFILE}
			}
		}, unix.EMFILE, false},
		{"the executable's stat", func(sc *procScanner, pid int) {
			exe := "/proc/" + strconv.Itoa(pid) + "/exe"
			sc.statPath = func(path string, st *unix.Stat_t) error {
				if path == exe {
					return unix.ENOMEM
				}
				return unix.Stat(path, st)
			}
		}, unix.ENOMEM, false},
		{"the status", func(sc *procScanner, pid int) {
			status := "/proc/" + strconv.Itoa(pid) + "/status"
			sc.readFile = func(path string, buf []byte) (int, error) {
				if path == status {
					return 0, unix.ENOMEM
				}
				return readProcFile(path, buf)
			}
		}, unix.ENOMEM, true},
		{"the status, read again", func(sc *procScanner, pid int) {
			status := "/proc/" + strconv.Itoa(pid) + "/status"
			sc.readFile = func(path string, buf []byte) (int, error) {
				if path == status {
					return 0, unix.ENOMEM
				}
				return readProcFile(path, buf)
			}
		}, unix.ENOMEM, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sc, err := newProcScanner("/proc", []string{shell})
			if err != nil {
				t.Fatal(err)
			}
			defer sc.Close()
			marker := filepath.Join(t.TempDir(), "rename")
			pid := renamer(t, shell, marker).Process.Pid
			if tt.atMatch {
				poll(t, "executed the program", func() bool { return procField(pid, "exe") == shell })
			} else {
				poll(t, "found the program", func() bool { _, ok := scanFor(t, sc)[pid]; return ok })
				// A process whose comm changed has its executable read
				// again.
				rename(t, pid, marker)
			}
			tt.fail(sc, pid)
			for range 2 {
				found, err := sc.Scan()
				if !errors.Is(err, tt.want) {
					t.Fatalf("a scan whose read of %s failed (%v): %v, %v; want the scan failed", tt.name, tt.want, found, err)
				}
				if was, ok := said[tt.want]; ok && err.Error() != was {
					t.Errorf("a failed scan said %q, and %q before", err, was)
				}
				said[tt.want] = err.Error()
			}
			// Once the reads succeed again, the process still runs its
			// program.
			sc.readFile, sc.statPath, sc.readDir = readProcFile, unix.Stat, os.ReadDir
			if _, ok := scanFor(t, sc)[pid]; !ok {
				t.Errorf("the program is no longer found once the reads succeed")
			}
		})
	}
}
