//go:build unix

package outfile_test

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/outfile"
)

// commit writes text through o and fails the test on an error.
func commit(t *testing.T, o *outfile.File, text string) {
	t.Helper()
	if err := o.Commit(func(w io.Writer) error { _, err := io.WriteString(w, text); return err }); err != nil {
		t.Fatal(err)
	}
}

// names lists dir's entries.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestNothingNamedWhileOpen: on Linux the temporary file has no name
// while the command runs (O_TMPFILE), so a run killed with SIGKILL leaves
// nothing beside its outputs; the file gets its name only when written.
func TestNothingNamedWhileOpen(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("unnamed temporary files (O_TMPFILE) are Linux's")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	o, err := outfile.Open("raw", path)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(t, dir); len(got) != 0 {
		t.Errorf("while open, the directory holds %q, want nothing", got)
	}
	commit(t, o, "written")
	if got := names(t, dir); len(got) != 1 || got[0] != "out.json" {
		t.Errorf("after the commit, the directory holds %q, want out.json alone", got)
	}
	if data, _ := os.ReadFile(path); string(data) != "written" {
		t.Errorf("out.json holds %q", data)
	}
	umask := syscall.Umask(0o022)
	syscall.Umask(umask)
	fi, _ := os.Stat(path)
	if want := os.FileMode(0o666 &^ umask); fi.Mode().Perm() != want {
		t.Errorf("out.json has mode %v, want %v (0666 less the umask), as a named temporary gets", fi.Mode(), want)
	}
}

// TestNamedTemporaries: where O_TMPFILE is not available the temporary
// is named, removed when nothing is written, and renamed into place.
func TestNamedTemporaries(t *testing.T) {
	outfile.NamedTemporaries(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	o, err := outfile.Open("raw", path)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(t, dir); len(got) != 1 || len(got[0]) < len(".tickscope-raw-1") {
		t.Errorf("while open, the directory holds %q, want one .tickscope-raw-N", got)
	}
	o.Close()
	if got := names(t, dir); len(got) != 0 {
		t.Errorf("after Close, the directory holds %q", got)
	}
	o, err = outfile.Open("raw", path)
	if err != nil {
		t.Fatal(err)
	}
	commit(t, o, "written")
	if got := names(t, dir); len(got) != 1 || got[0] != "out.json" {
		t.Errorf("after the commit, the directory holds %q, want out.json alone", got)
	}
}

// TestSweepsStaleTemporaries: before writing, Open removes the temporary
// files that earlier runs of the caller's left when killed: by name,
// owner and age, and only those no running tickscope holds.
func TestSweepsStaleTemporaries(t *testing.T) {
	outfile.NamedTemporaries(t) // the live run below holds a named one
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	file := func(name string, mtime time.Time) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return path
	}
	removed := []string{".tickscope-raw-123", ".tickscope-html-4567", ".tickscope-cyclictest-json-89"}
	for _, name := range removed {
		file(name, old)
	}
	kept := []string{"tickscope-raw-1", ".tickscope-raw-x1", ".tickscope-raw-", ".tickscope-RAW-1", "other.json"}
	for _, name := range kept {
		file(name, old)
	}
	// Written after this run began: another run's, maybe still writing.
	file(".tickscope-raw-2", time.Now().Add(time.Hour))
	kept = append(kept, ".tickscope-raw-2")
	// Held by a running tickscope: its temporary is locked.
	live, err := outfile.Open("raw", filepath.Join(dir, "live.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	var liveName string
	for _, name := range names(t, dir) {
		if len(name) > len(".tickscope-raw-") && name[:len(".tickscope-raw-")] == ".tickscope-raw-" && name != ".tickscope-raw-123" && name != ".tickscope-raw-2" {
			liveName = name
		}
	}
	if liveName == "" {
		t.Fatal("the live run's temporary is not in the directory")
	}
	if err := os.Chtimes(filepath.Join(dir, liveName), old, old); err != nil {
		t.Fatal(err)
	}
	kept = append(kept, liveName)
	// A symlink named as a temporary is not a temporary.
	if err := os.Symlink("other.json", filepath.Join(dir, ".tickscope-raw-55")); err != nil {
		t.Fatal(err)
	}
	kept = append(kept, ".tickscope-raw-55")
	// Another user's file (as root, who can give one away).
	if os.Geteuid() == 0 {
		theirs := file(".tickscope-raw-66", old)
		if err := os.Chown(theirs, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		kept = append(kept, ".tickscope-raw-66")
	} else {
		t.Log("not root: another user's temporary is not tried")
	}

	o, err := outfile.Open("raw", filepath.Join(dir, "out.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	for _, name := range removed {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s, left by a killed run, is still there", name)
		}
	}
	for _, name := range kept {
		if _, err := os.Lstat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s was removed: %v", name, err)
		}
	}
	commit(t, live, "the live run's result")
	if data, _ := os.ReadFile(filepath.Join(dir, "live.json")); string(data) != "the live run's result" {
		t.Errorf("the live run wrote %q", data)
	}
}
