package outfile_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/tickscope/tickscope/internal/outfile"
)

// TestSameStream: with Windows's rule (regularOnly) a pipe or a device is
// no stream a path can name, even when the two are the same file, as on
// Windows every pipe, console and NUL would be (their identities all 0);
// only two regular files are compared. Unix's rule compares pipes and
// devices too, so that /dev/stdout on a pipe is the pipe.
func TestSameStream(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	dir := t.TempDir()
	file, err := os.Create(filepath.Join(dir, "out.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if err := os.WriteFile(filepath.Join(dir, "other.log"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	stat := func(path string) os.FileInfo {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	fstat := func(f *os.File) os.FileInfo {
		t.Helper()
		fi, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	byFD := func(f *os.File) string { return "/proc/self/fd/" + strconv.Itoa(int(f.Fd())) }
	for _, tt := range []struct {
		name          string
		path, stream  os.FileInfo
		windows, unix bool
	}{
		{"a pipe's name and the pipe", stat(byFD(w)), fstat(w), false, true},
		{"the null device and itself", stat(os.DevNull), fstat(null), false, true},
		{"a regular file's name and the file", stat(file.Name()), fstat(file), true, true},
		{"another regular file", stat(filepath.Join(dir, "other.log")), fstat(file), false, false},
		{"the null device and a pipe", stat(os.DevNull), fstat(w), false, false},
	} {
		if got := outfile.SameStream(tt.path, tt.stream, true); got != tt.windows {
			t.Errorf("%s, Windows's rule: %v, want %v", tt.name, got, tt.windows)
		}
		if got := outfile.SameStream(tt.path, tt.stream, false); got != tt.unix {
			t.Errorf("%s, Unix's rule: %v, want %v", tt.name, got, tt.unix)
		}
	}
}
