package outfile_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/outfile"
)

// swapDirs makes base/out, the output's directory, and base/other, a
// directory whose owner did not ask for the file: it holds out.json and a
// temporary an earlier run of the caller's left, old enough to be swept.
// swap renames out away (to out.moved) and puts a symlink to other in its
// place, as the owner of base could at any moment.
func swapDirs(t *testing.T) (base string, swap func(), untouched func()) {
	t.Helper()
	base = t.TempDir()
	out, other := filepath.Join(base, "out"), filepath.Join(base, "other")
	for _, dir := range []string{out, other} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(other, "out.json"), []byte("other's own"), 0o644); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(other, ".tickscope-raw-123")
	if err := os.WriteFile(stale, []byte("other's stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	swap = func() {
		if err := os.Rename(out, filepath.Join(base, "out.moved")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(other, out); err != nil {
			t.Fatal(err)
		}
	}
	untouched = func() {
		t.Helper()
		if got := names(t, other); !slices.Equal(got, []string{".tickscope-raw-123", "out.json"}) {
			t.Errorf("the other directory holds %q, want its own two files", got)
		}
		if data, _ := os.ReadFile(filepath.Join(other, "out.json")); string(data) != "other's own" {
			t.Errorf("the other directory's out.json holds %q", data)
		}
	}
	return base, swap, untouched
}

// TestSwapAfterOpeningTouchesNothingElsewhere: the output's directory is
// swapped for a symlink to another directory once Open holds it. Nothing
// Open does next (the sweep of stale temporaries, the temporary file, the
// trial of the final name) reaches the other directory, and Commit
// refuses, writing nothing anywhere.
func TestSwapAfterOpeningTouchesNothingElsewhere(t *testing.T) {
	for _, named := range []bool{false, true} {
		t.Run(map[bool]string{false: "unnamed", true: "named"}[named], func(t *testing.T) {
			if named {
				outfile.NamedTemporaries(t)
			}
			base, swap, untouched := swapDirs(t)
			outfile.AtStage(t, "opened", swap)
			o, err := outfile.Open("raw", filepath.Join(base, "out", "out.json"))
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			untouched()
			err = o.Commit(func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err })
			if err == nil || !strings.Contains(err.Error(), "the directory "+filepath.Join(base, "out")+" was replaced during the run (it is now a symlink)") {
				t.Errorf("Commit: %v, want a refusal", err)
			}
			untouched()
			if got := names(t, filepath.Join(base, "out.moved")); len(got) != 0 {
				t.Errorf("the directory moved away holds %q, want nothing", got)
			}
		})
	}
}

// TestSwapBeforeCloseRemovesNothingElsewhere: a named temporary is
// removed from the directory held when nothing is written, not by its
// name: after a swap, the name leads to a file of the same name in
// another directory, which is left alone.
func TestSwapBeforeCloseRemovesNothingElsewhere(t *testing.T) {
	outfile.NamedTemporaries(t)
	base, swap, untouched := swapDirs(t)
	o, err := outfile.Open("raw", filepath.Join(base, "out", "out.json"))
	if err != nil {
		t.Fatal(err)
	}
	temps := names(t, filepath.Join(base, "out"))
	if len(temps) != 1 {
		t.Fatalf("the output's directory holds %q, want one temporary", temps)
	}
	swap()
	same := filepath.Join(base, "other", temps[0])
	if err := os.WriteFile(same, []byte("other's, named as the temporary"), 0o600); err != nil {
		t.Fatal(err)
	}
	o.Close()
	if data, err := os.ReadFile(same); err != nil || string(data) != "other's, named as the temporary" {
		t.Errorf("the other directory's %s: %q, %v; want it as it was", temps[0], data, err)
	}
	os.Remove(same)
	untouched()
	if got := names(t, filepath.Join(base, "out.moved")); len(got) != 0 {
		t.Errorf("the directory held holds %q after Close, want nothing", got)
	}
}

// TestSwapAfterCheckWritesIntoTheDirectoryHeld: a swap after Commit's
// check of the directory (a race no check can close) still cannot choose
// where the file goes: the check of the final name, the named copy of an
// unnamed file the OS will not link, and the rename are all relative to
// the directory held, so the file lands there and the other directory is
// untouched, not even by a temporary.
func TestSwapAfterCheckWritesIntoTheDirectoryHeld(t *testing.T) {
	base, swap, untouched := swapDirs(t)
	out := filepath.Join(base, "out")
	// An unnamed file made with O_EXCL cannot be linked: Commit copies it
	// into a named temporary.
	fd, err := unix.Open(out, unix.O_TMPFILE|unix.O_EXCL|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err != nil {
		t.Skipf("O_TMPFILE: %v", err)
	}
	o := outfile.WithUnnamed(t, "raw", filepath.Join(out, "out.json"), os.NewFile(uintptr(fd), "unlinkable"))
	outfile.AtStage(t, "checked", swap)
	commit(t, o, "new")
	untouched()
	moved := filepath.Join(base, "out.moved")
	if got := names(t, moved); !slices.Equal(got, []string{"out.json"}) {
		t.Errorf("the directory held holds %q, want out.json alone", got)
	}
	if data, _ := os.ReadFile(filepath.Join(moved, "out.json")); string(data) != "new" {
		t.Errorf("the file written holds %q", data)
	}
}

// TestSwapOnTheWayIsNotFollowed: a directory on the way to the output
// (not its own directory) is swapped for a symlink after its links were
// resolved and checked, before the directory is opened. Opening it follows
// no link on the way, whatever fs.protected_symlinks says, so Open
// refuses (exit 2, naming the directory) and nothing is written into the
// directory the link leads to.
func TestSwapOnTheWayIsNotFollowed(t *testing.T) {
	base := t.TempDir()
	for _, dir := range []string{"a/b", "evil/b"} {
		if err := os.MkdirAll(filepath.Join(base, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	outfile.AtStage(t, "resolved", func() {
		if err := os.Rename(filepath.Join(base, "a"), filepath.Join(base, "a.moved")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(base, "evil"), filepath.Join(base, "a")); err != nil {
			t.Fatal(err)
		}
	})
	o, err := outfile.Open("raw", filepath.Join(base, "a", "b", "out.json"))
	if err == nil {
		commit(t, o, "new")
		t.Error("Open followed a symlink put on the way")
	}
	var usage *options.UsageError
	if err != nil && (!errors.As(err, &usage) || !strings.Contains(err.Error(), filepath.Join(base, "a")+" became a symlink after its links were checked")) {
		t.Errorf("Open: %v, want a usage error naming %s", err, filepath.Join(base, "a"))
	}
	if got := names(t, filepath.Join(base, "evil", "b")); len(got) != 0 {
		t.Errorf("the directory the link leads to holds %q, want nothing", got)
	}
}
