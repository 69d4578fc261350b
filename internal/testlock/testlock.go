//go:build !windows

// Package testlock serialises tests, across the processes `go test ./...`
// runs side by side, that use something the whole machine shares: the
// kernel applies the smallest /dev/cpu_dma_latency request of all
// processes, so a test that holds one and one that reads it back must not
// overlap.
package testlock

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// DMALatency is the lock of tests that hold or read /dev/cpu_dma_latency.
const DMALatency = "dma-latency"

// Lock blocks until no other test holds the lock called name, and returns
// its release. The kernel drops the lock if the test process dies.
func Lock(name string) (release func(), err error) {
	path := filepath.Join(os.TempDir(), "tickscope-test-"+name+".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
