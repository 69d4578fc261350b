package platform

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tickscope/tickscope/internal/seam"
)

// OpenStateFile makes the state directory (the lock directory) and its
// file, empties it only for StateReplace, keeps it for StateAppend, and
// refuses what is not a plain file of the user's with one name, without
// writing through it; reading what does not exist is fs.ErrNotExist.
func TestOpenStateFile(t *testing.T) {
	dir := testLockDir(t)
	sys := system{}
	if got, err := sys.StateDir(); err != nil || got != dir {
		t.Fatalf("StateDir: %q, %v; want %q", got, err, dir)
	}
	if _, err := sys.OpenStateFile("holder.log", seam.StateRead); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("reading before the directory exists: %v, want not exist", err)
	}
	write := func(how seam.StateOpen, text string) {
		t.Helper()
		f, err := sys.OpenStateFile("holder.log", how)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := io.WriteString(f, text); err != nil {
			t.Fatal(err)
		}
	}
	read := func() string {
		t.Helper()
		f, err := sys.OpenStateFile("holder.log", seam.StateRead)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		data, _ := io.ReadAll(f)
		return string(data)
	}
	write(seam.StateReplace, "first\n")
	write(seam.StateAppend, "second\n")
	if got := read(); got != "first\nsecond\n" {
		t.Errorf("after replace and append: %q", got)
	}
	write(seam.StateReplace, "third\n")
	if got := read(); got != "third\n" {
		t.Errorf("after a second replace: %q", got)
	}
	if fi, err := os.Stat(filepath.Join(dir, "holder.log")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the file: %v, %v; want mode 0600", fi, err)
	}

	target := filepath.Join(t.TempDir(), "precious")
	log := filepath.Join(dir, "holder.log")
	for _, plant := range []struct {
		name, want string
		plant      func() error
	}{
		{"a symbolic link", "it is a symbolic link", func() error { return os.Symlink(target, log) }},
		{"a second name", "not a plain file with one name", func() error { return os.Link(target, log) }},
		{"a FIFO", "not a plain file with one name", func() error { return unix.Mkfifo(log, 0o600) }},
		{"a file others can write", "lets users other than its owner write it", func() error {
			if err := os.WriteFile(log, []byte("keep me\n"), 0o600); err != nil {
				return err
			}
			return os.Chmod(log, 0o666)
		}},
	} {
		if err := os.WriteFile(target, []byte("keep me\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Remove(log)
		if err := plant.plant(); err != nil {
			t.Fatal(err)
		}
		for _, how := range []seam.StateOpen{seam.StateReplace, seam.StateAppend, seam.StateRead} {
			f, err := sys.OpenStateFile("holder.log", how)
			if err == nil {
				f.Close()
			}
			if err == nil || !strings.Contains(err.Error(), plant.want) {
				t.Errorf("%s, opened %d: %v, want a refusal saying %q", plant.name, how, err, plant.want)
			}
		}
		if data, _ := os.ReadFile(target); string(data) != "keep me\n" {
			t.Errorf("%s: its target now holds %q", plant.name, data)
		}
		if plant.name == "a file others can write" {
			if data, _ := os.ReadFile(log); string(data) != "keep me\n" {
				t.Errorf("%s: it now holds %q", plant.name, data)
			}
		}
	}
}
