//go:build unix

package outfile_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/tickscope/tickscope/internal/outfile"
)

// TestUmaskLeavesTheUmaskAlone: where the OS cannot tell the umask
// without setting it (macOS), reading it while another goroutine creates
// files must not change what those files get: a 0666 file made under
// umask 022 is 0644, never the 0600 of a umask set for a moment to 077.
func TestUmaskLeavesTheUmaskAlone(t *testing.T) {
	outfile.NoProcUmask(t)
	defer syscall.Umask(syscall.Umask(0o022))
	dir := t.TempDir()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 20000 {
			outfile.Umask()
		}
	}()
	path := filepath.Join(dir, "f")
	for n := 0; ; n++ {
		select {
		case <-done:
			t.Logf("%d files made, all 0644", n)
			return
		default:
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := f.Stat()
		f.Close()
		os.Remove(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o644 {
			t.Fatalf("a file made while umask was read is %v, want -rw-r--r--: reading the umask changed it", fi.Mode().Perm())
		}
	}
}
