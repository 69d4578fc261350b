package outfile

import (
	"os"
	"path/filepath"
	"testing"
)

// NamedTemporaries makes Open take named temporary files for the rest of
// t, as on a file system without O_TMPFILE.
func NamedTemporaries(t *testing.T) {
	tryUnnamed = false
	t.Cleanup(func() { tryUnnamed = true })
}

// WithUnnamed is a File that writes path through the unnamed file f.
func WithUnnamed(t *testing.T, flag, path string, f *os.File) *File {
	t.Cleanup(func() { f.Close() })
	dir, err := openDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	return &File{flag: flag, path: path, tmp: f, unnamed: true, dir: dir}
}

// AtStage calls f when Open or Commit reaches stage ("resolved",
// "opened", "checked"), for the rest of t: a test changes the file system
// there, as another user could at that moment.
func AtStage(t *testing.T, stage string, f func()) {
	testHook = func(s string) {
		if s == stage {
			f()
		}
	}
	t.Cleanup(func() { testHook = func(string) {} })
}

// SameStream is sameStream: whether fi is the stream si, with regularOnly
// as on Windows.
var SameStream = sameStream
