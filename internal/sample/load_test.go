package sample_test

import (
	"errors"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/machine"
	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
)

// clockHost is a fakeHost whose process CPU time and busy threads' CPU
// clocks the test sets.
type clockHost struct {
	*fakeHost
	process atomic.Int64
	// perThread is what every busy thread's clock reads.
	perThread atomic.Int64
	fail      error
	mu        sync.Mutex
	opened    int
	released  int
}

func (h *clockHost) CPUTime() time.Duration { return time.Duration(h.process.Load()) }

func (h *clockHost) ThreadCPU() (func() time.Duration, func(), error) {
	if h.fail != nil {
		return nil, nil, h.fail
	}
	h.mu.Lock()
	h.opened++
	h.mu.Unlock()
	read := func() time.Duration { return time.Duration(h.perThread.Load()) }
	return read, func() { h.mu.Lock(); h.released++; h.mu.Unlock() }, nil
}

// idle is a load's work that burns no CPU, for tests of the bookkeeping.
var idle = sample.Work{Kind: rawfile.LoadCPU, Run: func(stop *atomic.Bool) uint64 {
	for !stop.Load() {
		time.Sleep(time.Millisecond)
	}
	return 0
}}

func TestNoLoadIsTheHostItself(t *testing.T) {
	h := &fakeHost{lateness: []int64{0}}
	got, load, err := sample.Loaded(h, 0, sample.CPUBound)
	if err != nil || got != seam.Host(h) || load != nil {
		t.Fatalf("Loaded(h, 0) = %v, %v, %v; want h itself and no load", got, load, err)
	}
	// A nil load does nothing.
	if err := load.Start(); err != nil {
		t.Fatal(err)
	}
	load.Stop()
	if load.CPU() != 0 || load.Record() != nil {
		t.Errorf("a nil load has CPU %v and record %v", load.CPU(), load.Record())
	}
}

func TestLoadNeedsAThreadClock(t *testing.T) {
	if _, _, err := sample.Loaded(&fakeHost{}, 1, sample.CPUBound); !errors.Is(err, sample.ErrNoThreadClock) {
		t.Fatalf("a load on a host without thread clocks: %v, want ErrNoThreadClock", err)
	}
	if _, _, err := sample.Loaded(&clockHost{fakeHost: &fakeHost{}}, -1, sample.CPUBound); err == nil {
		t.Fatal("a load of -1 threads was accepted")
	}
}

// The loaded host's CPU time is the process's less the busy threads',
// never running backwards; GOMAXPROCS is raised by the threads while they
// run and put back after; each thread's clock is released when it stops,
// and its last reading kept.
func TestLoadedHostLeavesTheLoadOut(t *testing.T) {
	pinMaxProcs(t)
	h := &clockHost{fakeHost: &fakeHost{}}
	h.process.Store(int64(10 * time.Second))
	// Each thread's clock already reads 1s when it starts: a thread of Go's
	// pool may have run other goroutines, which were not the load.
	h.perThread.Store(int64(time.Second))
	loaded, load, err := sample.Loaded(h, 3, idle)
	if err != nil {
		t.Fatal(err)
	}
	procs := runtime.GOMAXPROCS(0)
	if got := loaded.CPUTime(); got != 10*time.Second {
		t.Errorf("before Start: %v, want the process's 10s", got)
	}
	if err := load.Start(); err != nil {
		t.Fatal(err)
	}
	if got := runtime.GOMAXPROCS(0); got != procs+3 {
		t.Errorf("GOMAXPROCS %d while 3 busy threads run, want %d", got, procs+3)
	}
	if got := loaded.CPUTime(); got != 10*time.Second {
		t.Errorf("3 threads that have used nothing since they started: %v, want the process's 10s", got)
	}
	h.process.Store(int64(12 * time.Second))
	h.perThread.Store(int64(1500 * time.Millisecond))
	if got := loaded.CPUTime(); got != 10500*time.Millisecond {
		t.Errorf("3 threads of 0.5s each out of 12s: %v, want 10.5s", got)
	}
	h.perThread.Store(int64(2 * time.Second)) // read after the process: 12s - 3s
	if got := loaded.CPUTime(); got != 10500*time.Millisecond {
		t.Errorf("a difference below the last: %v, want the last, 10.5s", got)
	}
	load.Stop()
	load.Stop() // a second Stop does nothing
	if got := runtime.GOMAXPROCS(0); got != procs {
		t.Errorf("GOMAXPROCS %d after the load, want %d as before", got, procs)
	}
	if h.opened != 3 || h.released != 3 {
		t.Errorf("%d thread clocks opened, %d released; want 3 and 3", h.opened, h.released)
	}
	h.perThread.Store(int64(100 * time.Second)) // no longer read
	if got := load.CPU(); got != 3*time.Second {
		t.Errorf("after Stop the load's CPU is %v, want the last readings' 3 x 1s", got)
	}
	if r := load.Record(); r == nil || r.Threads != 3 || r.Kind != rawfile.LoadCPU {
		t.Errorf("record %+v, want 3 threads of kind cpu", r)
	}
}

func TestLoadThatCannotStartStopsItsThreads(t *testing.T) {
	pinMaxProcs(t)
	h := &clockHost{fakeHost: &fakeHost{}, fail: errors.New("no clock")}
	_, load, err := sample.Loaded(h, 2, idle)
	if err != nil {
		t.Fatal(err)
	}
	procs := runtime.GOMAXPROCS(0)
	if err := load.Start(); err == nil {
		t.Fatal("Start succeeded without thread clocks")
	}
	if got := runtime.GOMAXPROCS(0); got != procs {
		t.Errorf("GOMAXPROCS %d after a failed start, want %d", got, procs)
	}
}

// endingClockHost is a ThreadEnder with thread clocks.
type endingClockHost struct {
	*clockHost
}

func (endingClockHost) ThreadEnding() func() { return func() {} }

// Measure sees through the loaded host to a seam.ThreadEnder (it waits
// for its thread to end on Windows).
func TestLoadedHostKeepsThreadEnder(t *testing.T) {
	loaded, _, err := sample.Loaded(endingClockHost{&clockHost{fakeHost: &fakeHost{}}}, 1, idle)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := loaded.(seam.ThreadEnder); !ok {
		t.Error("the loaded host of a ThreadEnder is not one")
	}
	loaded, _, err = sample.Loaded(&clockHost{fakeHost: &fakeHost{}}, 1, idle)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := loaded.(seam.ThreadEnder); ok {
		t.Error("the loaded host of a host that is no ThreadEnder is one")
	}
}

// On this machine, where the host reads thread clocks: the busy threads
// use CPU, no more than the wall time each, and the loaded host's CPU time
// leaves it out of the process's.
func TestCPUBoundLoadHere(t *testing.T) {
	host := machine.Host()
	if _, ok := host.(seam.ThreadClock); !ok {
		t.Skipf("%s's host reads no thread clocks: --load is not offered here", runtime.GOOS)
	}
	loaded, load, err := sample.Loaded(host, 2, sample.CPUBound)
	if err != nil {
		t.Fatal(err)
	}
	if err := load.Start(); err != nil {
		t.Fatal(err)
	}
	start, processBefore, loadedBefore := time.Now(), host.CPUTime(), loaded.CPUTime()
	time.Sleep(200 * time.Millisecond)
	processUsed, loadedUsed, loadUsed := host.CPUTime()-processBefore, loaded.CPUTime()-loadedBefore, load.CPU()
	wall := time.Since(start)
	load.Stop()
	if loadUsed <= 0 || loadUsed > 2*(wall+50*time.Millisecond) {
		t.Errorf("2 busy threads used %v of CPU in %v", loadUsed, wall)
	}
	// The two are read a few µs apart while the threads run on: the
	// loaded host leaves out about loadUsed, at least half of it surely.
	if left := processUsed - loadedUsed; left < loadUsed/2 || loadedUsed > processUsed {
		t.Errorf("the process used %v, the loaded host says %v: it left %v of the load's %v out", processUsed, loadedUsed, left, loadUsed)
	}
}

// pinMaxProcs says the GOMAXPROCS in force is one a GOMAXPROCS variable
// set, the value a load must put back: go test -cpu sets it by the
// runtime's call, which Load cannot tell from Go's default (the default's
// own path is TestLoadGivesBackDefaultMaxProcs').
func pinMaxProcs(t *testing.T) {
	t.Setenv("GOMAXPROCS", strconv.Itoa(runtime.GOMAXPROCS(0)))
}

// TestLoadGivesBackDefaultMaxProcs: a GOMAXPROCS that was Go's default
// (no GOMAXPROCS variable) is Go's default again after the load, which
// keeps the runtime following the CPUs and the cgroup's CPU limit, not a
// value set once that turns those updates off for the rest of the
// process; one the variable set is put back as it was.
func TestLoadGivesBackDefaultMaxProcs(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	for _, tt := range []struct {
		env  string
		want []int
	}{
		{"", []int{procs + 2, -1}},
		{"0", []int{procs + 2, -1}},
		{"junk", []int{procs + 2, -1}},
		{"3", []int{procs + 2, procs}},
	} {
		t.Run("GOMAXPROCS="+tt.env, func(t *testing.T) {
			t.Setenv("GOMAXPROCS", tt.env)
			var calls []int
			sample.RecordMaxProcs(t, &calls)
			_, load, err := sample.Loaded(&clockHost{fakeHost: &fakeHost{}}, 2, idle)
			if err != nil {
				t.Fatal(err)
			}
			if err := load.Start(); err != nil {
				t.Fatal(err)
			}
			load.Stop()
			if !slices.Equal(calls, tt.want) {
				t.Errorf("GOMAXPROCS set to %v (-1: Go's default), want %v", calls, tt.want)
			}
		})
	}
}
