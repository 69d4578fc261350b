package sample

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/seam"
)

// Work is what every busy thread of a load does until stop is set.
type Work struct {
	// Kind names the work in the raw file (rawfile.Load.Kind).
	Kind string
	// Run returns a value that depends on all its work, so that the
	// compiler cannot leave any out.
	Run func(stop *atomic.Bool) uint64
}

// CPUBound is the load tickscope runs: a loop of integer arithmetic in
// registers (a xorshift generator), with no memory traffic and no system
// call, looking at stop every 65,536 rounds (0.25 ms on this project's
// machines). A memory-bound kind added nothing this one does not, measured
// there (BENCHMARKS.md, tools/load-effect).
var CPUBound = Work{Kind: rawfile.LoadCPU, Run: xorshiftLoop}

func xorshiftLoop(stop *atomic.Bool) uint64 {
	x := uint64(88172645463325252)
	for !stop.Load() {
		for range 1 << 16 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
	}
	return x
}

// sink keeps the busy threads' results, so that their work is needed.
var sink atomic.Uint64

// Load is busy threads that run beside a measurement for the whole run
// (--load N), so that it measures a machine at work, as a game keeps it,
// rather than an idle one.
//
// Each busy thread is a goroutine locked to its own OS thread, at the
// priority every thread of the process starts with, and placed by the OS's
// scheduler: nothing is pinned. A program's threads are not pinned either,
// and pinning the measuring thread away from the load would change what
// is measured (a pinned thread cannot wake on whichever CPU is idle); with
// more busy threads than other CPUs there are none to pin to. So the load
// is pure Go, and an OS effect only where its CPU time is read (below).
//
// While a load runs, GOMAXPROCS is raised by its thread count: Go runs at
// most GOMAXPROCS goroutines at once, and busy goroutines holding every P
// would make the measuring goroutine, back from its wait, queue for a P
// until Go's scheduler preempts one (up to 10 ms) — Go's scheduling, not
// the OS's. With a P for each busy thread, the measuring thread contends
// with them only in the OS's scheduler, as a native program's thread does.
//
// The process's CPU time (Host.CPUTime, a point's conditions.cpu_ns and
// compare's CPU column) would count the load's; the host the load is
// given leaves it out, reading each busy thread's CPU clock
// (seam.ThreadClock).
//
// A nil *Load is no load: its methods do nothing.
type Load struct {
	clock   seam.ThreadClock
	threads int
	work    Work

	stop    atomic.Bool
	wg      sync.WaitGroup
	mu      sync.Mutex
	slots   []*busyThread
	started bool
	// procs is GOMAXPROCS before Start raised it; procsDefault says it
	// was Go's default, which the runtime keeps in step with the CPUs and
	// the cgroup's CPU limit, and which Stop turns back on.
	procs        int
	procsDefault bool
	// hostCPU is the last CPU time the loaded host gave: it never gives
	// less (see loadedHost).
	hostCPU atomic.Int64
}

// busyThread is one busy thread's CPU clock: read while it runs, final
// once it has stopped. base is its reading when it started its work: a
// thread from Go's pool may have run other goroutines before, whose CPU
// time is the process's, not the load's.
type busyThread struct {
	mu    sync.Mutex
	read  func() time.Duration
	base  time.Duration
	final time.Duration
}

func (b *busyThread) cpu() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.read != nil {
		return b.read() - b.base
	}
	return b.final - b.base
}

// ErrNoThreadClock is a load asked of a host that cannot read a thread's
// CPU time: its measurements would count the load's CPU as the waits'.
var ErrNoThreadClock = errors.New("this OS's build cannot tell a busy thread's CPU time from the measurement's")

// Loaded prepares a load of threads busy threads doing work beside
// measurements on h, and returns h as the measurements should see it: its
// CPUTime leaves the load's CPU time out. threads 0 is no load: h itself
// and a nil *Load. Nothing runs until Start.
func Loaded(h seam.Host, threads int, work Work) (seam.Host, *Load, error) {
	if threads == 0 {
		return h, nil, nil
	}
	if threads < 0 {
		return nil, nil, fmt.Errorf("a load of %d threads", threads)
	}
	clock, ok := h.(seam.ThreadClock)
	if !ok {
		return nil, nil, ErrNoThreadClock
	}
	l := &Load{clock: clock, threads: threads, work: work}
	loaded := loadedHost{Host: h, load: l}
	if ender, ok := h.(seam.ThreadEnder); ok {
		return loadedEnderHost{loaded, ender}, l, nil
	}
	return loaded, l, nil
}

// Start starts the busy threads, and returns once every one of them runs
// its work. It is called once.
func (l *Load) Start() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	if l.started {
		l.mu.Unlock()
		return errors.New("load started twice")
	}
	l.started = true
	l.mu.Unlock()
	l.procs = runtime.GOMAXPROCS(0)
	l.procsDefault = defaultMaxProcs()
	setMaxProcs(l.procs + l.threads)
	ready := make(chan error, l.threads)
	for range l.threads {
		l.wg.Add(1)
		go l.busy(ready)
	}
	var first error
	for range l.threads {
		if err := <-ready; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		l.Stop()
		return fmt.Errorf("starting the load: %w", first)
	}
	return nil
}

// busy is one busy thread: on its own OS thread, registered with its CPU
// clock before it starts its work, and handed back to Go's pool
// unchanged (it changes nothing of its thread) once its clock's last
// reading is kept.
func (l *Load) busy(ready chan<- error) {
	defer l.wg.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	read, done, err := l.clock.ThreadCPU()
	if err != nil {
		ready <- err
		return
	}
	slot := &busyThread{read: read, base: read()}
	l.mu.Lock()
	l.slots = append(l.slots, slot)
	l.mu.Unlock()
	ready <- nil
	sink.Add(l.work.Run(&l.stop))
	slot.mu.Lock()
	slot.final, slot.read = read(), nil
	done()
	slot.mu.Unlock()
}

// Stop stops the busy threads, waits for them to end their work, and
// puts GOMAXPROCS back: Go's default again when it was the default (a
// value set by runtime.GOMAXPROCS would end the runtime's updates for the
// rest of the process), the value it had otherwise. It may be called more
// than once.
func (l *Load) Stop() {
	if l == nil {
		return
	}
	l.mu.Lock()
	started := l.started
	l.mu.Unlock()
	if !started || l.stop.Swap(true) {
		return
	}
	l.wg.Wait()
	if l.procsDefault {
		setDefaultMaxProcs()
	} else {
		setMaxProcs(l.procs)
	}
}

// setMaxProcs and setDefaultMaxProcs are the runtime's, replaced by tests
// to see which one Stop calls: whether the runtime updates GOMAXPROCS is
// not observable but over time.
var (
	setMaxProcs        = runtime.GOMAXPROCS
	setDefaultMaxProcs = runtime.SetDefaultGOMAXPROCS
)

// defaultMaxProcs reports whether GOMAXPROCS is Go's default: no
// GOMAXPROCS variable set it at start-up (the runtime ignores one that is
// not a positive number), and tickscope sets it only while a load runs.
func defaultMaxProcs() bool {
	n, err := strconv.ParseInt(os.Getenv("GOMAXPROCS"), 10, 32)
	return err != nil || n <= 0
}

// CPU is the CPU time the busy threads have used so far.
func (l *Load) CPU() time.Duration {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	slots := l.slots
	l.mu.Unlock()
	var total time.Duration
	for _, s := range slots {
		total += s.cpu()
	}
	return total
}

// Record is the load as the raw file records it (nil for none).
func (l *Load) Record() *rawfile.Load {
	if l == nil {
		return nil
	}
	return &rawfile.Load{Threads: l.threads, Kind: l.work.Kind}
}

// loadedHost is a host whose CPUTime leaves a load's CPU time out.
type loadedHost struct {
	seam.Host
	load *Load
}

// WatchStops is the host's, where it has one: a load does not change
// what the process can tell of its own stops.
func (h loadedHost) WatchStops() (seam.StopWatch, error) {
	if w, ok := h.Host.(seam.StopWatcher); ok {
		return w.WatchStops()
	}
	return nil, nil
}

// CPUTime is the process's CPU time less the load's. The busy threads run
// on while the two are read, so the difference can come out a few µs
// below the one before: it is held to never run backwards, as the
// process's own CPU time does not.
func (h loadedHost) CPUTime() time.Duration {
	cpu := int64(h.Host.CPUTime() - h.load.CPU())
	for {
		last := h.load.hostCPU.Load()
		if cpu <= last {
			return time.Duration(last)
		}
		if h.load.hostCPU.CompareAndSwap(last, cpu) {
			return time.Duration(cpu)
		}
	}
}

// loadedEnderHost is a loadedHost of a seam.ThreadEnder, which Measure
// needs to see through it.
type loadedEnderHost struct {
	loadedHost
	seam.ThreadEnder
}
