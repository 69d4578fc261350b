//go:build unix

package outfile_test

import (
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRefusesSpecialFiles: renaming over a device node, a FIFO or a socket
// (or a symlink to one) would replace it with a regular file; each is
// refused and is still there afterwards.
func TestRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	links := map[string]string{"to-null": "/dev/null", "to-fifo": fifo, "to-stdout": "/proc/self/fd/1"}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct{ name, path, want string }{
		{"/dev/null", "/dev/null", "it is a character device"},
		{"FIFO", fifo, "it is a FIFO"},
		{"socket", sock, "it is a socket"},
		{"symlink to /dev/null", filepath.Join(dir, "to-null"), "symlink to a character device"},
		{"symlink to a FIFO", filepath.Join(dir, "to-fifo"), "symlink to a FIFO"},
	}
	if runtime.GOOS == "linux" {
		// /proc/self/fd/1 is a symlink to a terminal, a pipe ("pipe:[N]",
		// which does not resolve) or a file: refused as this run's
		// standard output whichever it is, a file the shell opened too.
		if _, err := os.Stat("/proc/self/fd/1"); err == nil {
			tests = append(tests, struct{ name, path, want string }{"symlink to /proc/self/fd/1", filepath.Join(dir, "to-stdout"), "it is this run's standard output"})
		}
		// A copy of /dev/null's node, as the battery made (root only).
		node := filepath.Join(dir, "null-copy")
		if err := mknod(node, 1, 3); err == nil {
			tests = append(tests, struct{ name, path, want string }{"mknod c 1 3", node, "it is a character device"})
		} else {
			t.Logf("mknod: %v: the device-node copy is not tried", err)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := os.Lstat(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			refused(t, dir, tt.path, tt.want)
			after, err := os.Lstat(tt.path)
			if err != nil || after.Mode() != before.Mode() {
				t.Errorf("%s changed: %v -> %v (%v)", tt.path, before.Mode(), after.Mode(), err)
			}
		})
	}
}
