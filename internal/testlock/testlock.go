// Package testlock serialises tests, across the processes `go test ./...`
// runs side by side, that use something the whole machine shares: the
// kernel applies the smallest /dev/cpu_dma_latency request of all
// processes, so a test that holds one and one that reads it back must not
// overlap.
package testlock

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// DMALatency is the lock of tests that hold or read /dev/cpu_dma_latency.
const DMALatency = "dma-latency"

// TracefsInstance is the lock of tests that make tickscope's tracefs
// instance: there is one of that name, and Open removes one it finds.
const TracefsInstance = "tracefs-instance"

// Lock blocks until no other test holds the lock called name, and returns
// its release.
func Lock(name string) (release func(), err error) { return lock(name) }

// Tracefs skips t unless it runs as root on a kernel that has tracefs,
// then holds TracefsInstance until t ends: what every test that traces
// does first.
func Tracefs(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (tracefs)")
	}
	fs, err := os.ReadFile("/proc/filesystems")
	if err != nil || !slices.Contains(strings.Fields(string(fs)), "tracefs") {
		t.Skip("this kernel has no tracefs")
	}
	release, err := Lock(TracefsInstance)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
}
