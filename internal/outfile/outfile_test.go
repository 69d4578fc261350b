package outfile_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/outfile"
)

// refused opens path and checks that it is a usage error containing want
// and that dir holds only the entries it held before.
func refused(t *testing.T, dir, path, want string) {
	t.Helper()
	before, _ := os.ReadDir(dir)
	o, err := outfile.Open("raw", path)
	if err == nil {
		o.Close()
		t.Fatalf("Open(%q) was accepted", path)
	}
	var usage *options.UsageError
	if !errors.As(err, &usage) {
		t.Errorf("Open(%q): %v is not a usage error (exit 2)", path, err)
	}
	if !strings.HasPrefix(err.Error(), "--raw ") || !strings.Contains(err.Error(), want) {
		t.Errorf("Open(%q): %q does not name the flag and say %q", path, err, want)
	}
	if after, _ := os.ReadDir(dir); len(after) != len(before) {
		t.Errorf("Open(%q) left %d entries in its directory, had %d", path, len(after), len(before))
	}
}

func TestRefusesBeforeMeasuring(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sub, filepath.Join(dir, "link-to-dir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "nothing"), filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, path, want string }{
		{"directory", sub, "it is a directory"},
		{"symlink to a directory", filepath.Join(dir, "link-to-dir"), "symlink to a directory"},
		{"dangling symlink", filepath.Join(dir, "dangling"), "symlink to a missing"},
		{"missing directory", filepath.Join(dir, "missing", "x.json"), "cannot write there"},
		{"300-character name", filepath.Join(dir, strings.Repeat("n", 300)+".json"), "cannot write there"},
		{"256-character name", filepath.Join(dir, strings.Repeat("n", 256)), "cannot write there"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { refused(t, dir, tt.path, tt.want) })
	}
}

func TestWritesRegularFiles(t *testing.T) {
	dir := t.TempDir()
	// The longest name most file systems hold is fine, and the trial leaves
	// nothing behind.
	long := filepath.Join(dir, strings.Repeat("n", 255))
	o, err := outfile.Open("raw", long)
	if err != nil {
		t.Fatalf("a 255-byte name was refused: %v", err)
	}
	o.Close()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("an unused File left %d entries", len(entries))
	}
	// An existing regular file is replaced; a symlink to one keeps the link
	// and replaces its target.
	target := filepath.Join(dir, "target.json")
	link := filepath.Join(dir, "link.json")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("target.json", link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{target, link} {
		o, err := outfile.Open("raw", path)
		if err != nil {
			t.Fatalf("Open(%s): %v", path, err)
		}
		if err := o.Commit(func(w io.Writer) error { _, err := w.Write([]byte("new " + path)); return err }); err != nil {
			t.Fatal(err)
		}
		o.Close()
		if got, _ := os.ReadFile(target); string(got) != "new "+path {
			t.Errorf("after writing %s the target holds %q", path, got)
		}
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("left %d entries, want the target and the link", len(entries))
	}
	// The empty path writes nothing.
	none, err := outfile.Open("raw", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := none.Commit(func(io.Writer) error { t.Error("wrote without a path"); return nil }); err != nil {
		t.Fatal(err)
	}
}
