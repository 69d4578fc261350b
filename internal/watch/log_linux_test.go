package watch

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLogOnAFullDisk: watch --log on a file system that fills (a tmpfs of
// 16 KiB) stops with the write's error and leaves only whole lines; it
// ended with a torn line ("...\"delay_") before.
func TestLogOnAFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to mount a small tmpfs")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=16k"); err != nil {
		t.Skipf("mounting a tmpfs: %v", err)
	}
	defer unix.Unmount(dir, 0)
	path := filepath.Join(dir, "watch.log")
	log, err := OpenLog("log", path)
	if err != nil {
		t.Fatal(err)
	}
	var writeErr error
	for i := 0; i < 10_000 && writeErr == nil; i++ {
		writeErr = log.Write(logEvent(i))
	}
	log.Close()
	if writeErr == nil {
		t.Fatal("10,000 lines fitted in a 16 KiB tmpfs")
	}
	t.Logf("the write failed: %v", writeErr)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := wholeLines(t, data); n < 10 {
		t.Errorf("only %d lines kept", n)
	}
}
