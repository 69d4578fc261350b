//go:build unix

package testlock

import (
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
)

// TestLockIsPrivate: the lock file is in a directory of the user's alone,
// not in the temporary directory, a link at its place is refused and the
// file it names left alone, and a second Lock waits for the first.
func TestLockIsPrivate(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	name := "selftest-" + strconv.Itoa(os.Getpid())
	dir, err := lockDir()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".lock")
	t.Cleanup(func() { os.Remove(path) })

	release, err := Lock(name)
	if err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("%d files in TMPDIR, want none", len(entries))
	}
	if fi, err := os.Lstat(dir); err != nil || fi.Mode().Perm()&0o022 != 0 || !fi.IsDir() {
		t.Errorf("the lock directory %s: %v, %v", dir, fi.Mode(), err)
	}
	var released atomic.Bool
	second := make(chan bool)
	go func() {
		r, err := Lock(name)
		if err != nil {
			t.Error(err)
			second <- false
			return
		}
		second <- released.Load()
		r()
	}()
	released.Store(true)
	release()
	if !<-second {
		t.Error("a second Lock did not wait for the first's release")
	}

	os.Remove(path)
	precious := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(precious, []byte("keep\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(precious, path); err != nil {
		t.Fatal(err)
	}
	if release, err := Lock(name); err == nil {
		release()
		t.Error("a link at the lock's place was followed")
	}
	if data, err := os.ReadFile(precious); err != nil || string(data) != "keep\n" {
		t.Errorf("the link's target reads %q, %v", data, err)
	}
}
