// Package testlock serialises tests, across the processes `go test ./...`
// runs side by side, that use something the whole machine shares: the
// kernel applies the smallest /dev/cpu_dma_latency request of all
// processes, so a test that holds one and one that reads it back must not
// overlap.
package testlock

// DMALatency is the lock of tests that hold or read /dev/cpu_dma_latency.
const DMALatency = "dma-latency"

// TracefsInstance is the lock of tests that make tickscope's tracefs
// instance: there is one of that name, and Open removes one it finds.
const TracefsInstance = "tracefs-instance"

// Lock blocks until no other test holds the lock called name, and returns
// its release.
func Lock(name string) (release func(), err error) { return lock(name) }
