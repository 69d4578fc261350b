package platform

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/seam"
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

// A program named by its path is told by the file: this process runs it
// when the path is a hard link to its executable (another path, the same
// file), and does not when the path holds a copy (the same bytes, another
// file).
func TestScanTellsAPathByItsFile(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(exe)
	// Beside the executable: a hard link stays on its volume (and Wine
	// gives each drive its own serial number).
	dir, err := os.MkdirTemp(filepath.Dir(exe), "scan")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	link := filepath.Join(dir, "link", name)
	cp := filepath.Join(dir, "copy", name)
	for _, d := range []string{filepath.Dir(link), filepath.Dir(cp)} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(exe, link); err != nil {
		t.Skipf("no hard link here: %v", err)
	}
	copyFile(t, exe, cp)
	exeKey, ok1, err1 := fileKeyOf(exe)
	linkKey, ok2, err2 := fileKeyOf(link)
	copyKey, ok3, err3 := fileKeyOf(cp)
	if !ok1 || !ok2 || !ok3 || err1 != nil || err2 != nil || err3 != nil {
		t.Fatalf("reading the keys: %v %v %v, %v %v %v", ok1, ok2, ok3, err1, err2, err3)
	}
	t.Logf("keys: executable %+v, link %+v, copy %+v", exeKey, linkKey, copyKey)
	if exeKey != linkKey || exeKey == copyKey {
		t.Fatalf("the link's key equals the executable's: %v (want true); the copy's: %v (want false)", exeKey == linkKey, exeKey == copyKey)
	}
	if _, ok, err := fileKeyOf(filepath.Join(dir, "none", name)); ok || err != nil {
		t.Errorf("nothing at the path: ok %v, err %v; want false, nil", ok, err)
	}
	pid := os.Getpid()
	for path, want := range map[string]bool{exe: true, link: true, cp: false} {
		scanner, err := system{}.ScanPrograms([]string{path})
		if err != nil {
			t.Fatal(err)
		}
		for scan := range 2 { // the second from what the first kept
			found, err := scanner.Scan()
			if err != nil {
				t.Fatal(err)
			}
			got := slices.ContainsFunc(found, func(p seam.ProgramProcess) bool { return p.PID == pid })
			if got != want {
				t.Errorf("scan %d for %s found this process: %v, want %v (%+v)", scan+1, path, got, want, found)
			}
		}
		if u := scanner.Unreadable(); len(u) != 0 {
			t.Errorf("scanning for %s: unreadable %+v", path, u)
		}
		if !want && len(scanner.(*snapshotScanner).rejected) == 0 {
			t.Errorf("scanning for %s kept no process it told runs another file", path)
		}
		scanner.Close()
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
