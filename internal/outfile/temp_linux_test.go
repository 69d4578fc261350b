package outfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tickscope/tickscope/internal/outfile"
)

// TestCopiesWhatCannotBeLinked: an unnamed file the OS will not link
// (here one made with O_EXCL, which forbids it) is copied into a named
// temporary and renamed into place all the same.
func TestCopiesWhatCannotBeLinked(t *testing.T) {
	dir := t.TempDir()
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_EXCL|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err != nil {
		t.Skipf("O_TMPFILE: %v", err)
	}
	f := os.NewFile(uintptr(fd), "unlinkable")
	path := filepath.Join(dir, "out.json")
	o := outfile.WithUnnamed(t, "raw", path, f)
	commit(t, o, "copied")
	if data, _ := os.ReadFile(path); string(data) != "copied" {
		t.Errorf("out.json holds %q", data)
	}
	if got := names(t, dir); len(got) != 1 {
		t.Errorf("the directory holds %q, want out.json alone", got)
	}
}
