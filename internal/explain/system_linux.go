package explain

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tickscope/tickscope/internal/attribution"
	"github.com/tickscope/tickscope/internal/procstat"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/tracefs"
	"golang.org/x/sys/unix"
)

// BufferKB is each CPU's trace buffer in the instance.
const BufferKB = 8192

// drainEvery is how often the trace's pages are read while it runs, so
// that a long run does not overwrite what it has not read.
const drainEvery = 100 * time.Millisecond

// NewSystem is this machine's System.
func NewSystem() System { return linuxSystem{} }

type linuxSystem struct{}

func (linuxSystem) CanTrace() (bool, string) {
	if os.Geteuid() != 0 {
		return false, "not root"
	}
	fs, err := os.ReadFile("/proc/filesystems")
	if err != nil {
		return false, "cannot read /proc/filesystems: " + err.Error()
	}
	if !slices.Contains(strings.Fields(string(fs)), "tracefs") {
		return false, "this kernel has no tracefs"
	}
	return true, ""
}

func (linuxSystem) Counters() (procstat.Snapshot, error) { return procstat.Read(procstat.Root()) }

func (linuxSystem) Thread() (Thread, error) { return linuxThread(unix.Gettid()), nil }

type linuxThread int

func (t linuxThread) TID() int { return int(t) }
func (t linuxThread) SchedStat() (procstat.SchedStat, error) {
	return procstat.ReadSchedStat(procstat.Root(), int(t))
}

type linuxTrace struct {
	in      *tracefs.Instance
	layout  tracefs.PageLayout
	dec     *attribution.Decoder
	readers []*tracefs.CPUReader
	info    TraceInfo

	mu    sync.Mutex
	pages map[int][][]byte
	// err is every failure of the drains and Stop, each text once
	// (fail, which errSeen keeps): a bad page is found by the drain's
	// scan and again by Stop's decoding.
	errSeen map[string]bool
	// loss finds the gaps as the drains read, in both modes (losses);
	// lost is each CPU's stats' loss count at the last drain.
	loss losses
	lost map[int]uint64
	err  error
	stop chan struct{}
	done chan struct{}

	// The flight recorder, when Flight started it: fr keeps the pages,
	// under mu; the waits as they end queue under qmu, a lock the
	// measuring thread holds only to append, never across a drain. A
	// drain takes the queue and leaves spare, the one it took before
	// (under mu), so that appending allocates only while the queue grows
	// to a drain's waits.
	fr               *flightRecorder
	switchID, idleID int
	qmu              sync.Mutex
	queue, spare     []flightWait
}

// flightWait is a wait as the observer saw it end.
type flightWait struct {
	index                int
	start, end, lateness int64
	late                 bool
}

func (linuxSystem) StartTrace(ctx context.Context, waiting func()) (_ Trace, err error) {
	traced, untraced := tracedCPUs()
	in, err := tracefs.Open(ctx, tracefs.Options{Events: attribution.Events, BufferKB: BufferKB, CPUs: traced, Waiting: waiting})
	if err != nil {
		return nil, err
	}
	t := &linuxTrace{in: in, pages: map[int][][]byte{}, stop: make(chan struct{}), done: make(chan struct{})}
	t.info = TraceInfo{Instance: in.Dir, Mounted: in.Mounted, RemovedLeftover: in.RemovedLeftover, Missing: slices.Clone(in.Missing)}
	if t.info.Missing == nil {
		t.info.Missing = []string{}
	}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	if t.layout, err = in.PageLayout(); err != nil {
		return nil, err
	}
	formats := map[string]*tracefs.Format{}
	for _, name := range in.Enabled {
		f, err := in.Format(name)
		if err != nil {
			return nil, err
		}
		formats[name] = f
	}
	if t.dec, err = attribution.NewDecoder(formats); err != nil {
		return nil, err
	}
	t.switchID, t.idleID = -1, -1
	if f := formats["sched:sched_switch"]; f != nil {
		t.switchID = int(f.ID)
	}
	if f := formats["power:cpu_idle"]; f != nil {
		t.idleID = int(f.ID)
	}
	cpus, err := in.CPUs()
	if err != nil {
		return nil, err
	}
	t.lost = map[int]uint64{}
	t.info.UntracedCPUs = untraced
	for _, c := range cpus {
		if traced != nil && !slices.Contains(traced, c) {
			continue
		}
		r, err := in.OpenCPU(c)
		if err != nil {
			return nil, err
		}
		t.readers = append(t.readers, r)
		s, err := in.Stats(c)
		if err != nil {
			return nil, fmt.Errorf("tracefs: %w", err)
		}
		t.lost[c] = s.Lost()
	}
	go t.drainLoop()
	return t, nil
}

func (t *linuxTrace) drainLoop() {
	defer close(t.done)
	tick := time.NewTicker(drainEvery)
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tick.C:
			t.drain()
		}
	}
}

// Flight makes the trace a flight recorder of at most maxWindows late
// waits' windows (see flightRecorder). It is called before the first
// wait, and the trace is then told of each wait as it ends (Waited).
func (t *linuxTrace) Flight(maxWindows int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.fr = newFlightRecorder(maxWindows, &t.loss)
	// What a drain read before is the recorder's now, so that the first
	// waits' windows are whole; its losses were found as it read.
	for cpu, pages := range t.pages {
		for _, p := range pages {
			s, err := scanPage(p, t.layout, t.switchID, t.idleID)
			t.fail(err) // said once: the drain that read it said it already
			t.fr.add(cpu, s, p)
		}
	}
	t.pages = nil
	return nil
}

// Waited queues a wait that ended, for the next drain: it is called on
// the measuring thread, between waits, and only appends.
func (t *linuxTrace) Waited(index int, start, end, lateness int64, late bool) {
	t.qmu.Lock()
	t.queue = append(t.queue, flightWait{index, start, end, lateness, late})
	t.qmu.Unlock()
}

// drain copies every page there is now; the flight recorder keeps of
// them only what a wait may need.
func (t *linuxTrace) drain() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fr != nil {
		t.drainFlight()
		return
	}
	for _, r := range t.readers {
		t.readCPU(r, func(p []byte, _ pageScan) { t.pages[r.CPU] = append(t.pages[r.CPU], slices.Clone(p)) })
	}
}

// readCPU reads every page there is now in r's buffer, giving each to
// the trace's losses and then to take (the page is the reader's, to be
// copied if kept), and then counts a loss r's stats say no page marked.
func (t *linuxTrace) readCPU(r *tracefs.CPUReader, take func(page []byte, s pageScan)) {
	before := t.loss.since(r.CPU)
	t.readPages(r, func(p []byte) {
		s, err := scanPage(p, t.layout, t.switchID, t.idleID)
		t.fail(err)
		t.loss.page(r.CPU, s)
		take(p, s)
	})
	st, err := t.in.Stats(r.CPU)
	if err != nil {
		// Unread, the drain may have lost events: taken as a loss.
		t.fail(err)
		t.loss.statsLost(r.CPU, before)
		return
	}
	if st.Lost() > t.lost[r.CPU] {
		t.loss.statsLost(r.CPU, before)
	}
	t.lost[r.CPU] = st.Lost()
}

// fail keeps err, unless nil or a failure of the same text was kept.
func (t *linuxTrace) fail(err error) {
	if err == nil || t.errSeen[err.Error()] {
		return
	}
	if t.errSeen == nil {
		t.errSeen = map[string]bool{}
	}
	t.errSeen[err.Error()] = true
	t.err = errors.Join(t.err, err)
}

// readPages reads every page there is now in r's buffer, giving each to
// take: the page is the reader's, to be copied if kept.
func (t *linuxTrace) readPages(r *tracefs.CPUReader, take func(page []byte)) {
	for {
		p, err := r.ReadPage()
		if err != nil {
			t.fail(err)
			return
		}
		if p == nil {
			return
		}
		take(p)
	}
}

// drainFlight is drain for the flight recorder: the waits that ended
// before it are taken first, so that no page a later wait may need is
// dropped (its window begins after the last of them ended, less the
// margin).
func (t *linuxTrace) drainFlight() {
	t.qmu.Lock()
	q := t.queue
	t.queue = t.spare[:0]
	t.qmu.Unlock()
	for _, w := range q {
		t.fr.waited(w.index, w.start, w.end, w.lateness, w.late)
	}
	t.spare = q
	for _, r := range t.readers {
		t.readCPU(r, func(p []byte, s pageScan) { t.fr.add(r.CPU, s, p) })
	}
	t.fr.prune()
}

func (t *linuxTrace) Info() TraceInfo { return t.info }

func (t *linuxTrace) Record(on bool) error {
	v := "0"
	if on {
		v = "1"
	}
	return os.WriteFile(filepath.Join(t.in.Dir, "tracing_on"), []byte(v), 0)
}

func (t *linuxTrace) Stop() ([]attribution.Event, []attribution.Gap, error) {
	err := os.WriteFile(filepath.Join(t.in.Dir, "tracing_on"), []byte("0"), 0)
	close(t.stop)
	<-t.done
	t.drain()
	var evs []attribution.Event
	var pages map[int][][]byte
	var gaps []attribution.Gap
	if t.fr == nil {
		pages, gaps = t.pages, t.loss.result()
	} else {
		pages, gaps = t.fr.kept()
		t.info.Flight = &FlightRecorder{PagesRead: t.fr.read, PeakPages: t.fr.peak, PageBytes: t.fr.pageBytes}
		for _, p := range pages {
			t.info.Flight.PagesKept += len(p)
		}
	}
	for cpu, pages := range pages {
		for _, p := range pages {
			pr, perr := tracefs.ReadPage(p, t.layout)
			if perr != nil {
				t.fail(perr)
				continue
			}
			for pr.Next() {
				e, ok, derr := t.dec.Decode(cpu, pr.Event())
				if derr != nil {
					t.fail(derr)
					break
				}
				if ok {
					evs = append(evs, e)
				}
			}
			t.fail(pr.Err())
		}
	}
	for _, r := range t.readers {
		if s, serr := t.in.Stats(r.CPU); serr == nil {
			t.info.Lost += s.Overrun + s.CommitOverrun + s.DroppedEvents
		}
	}
	attribution.Sort(evs)
	t.info.Events = len(evs)
	if t.err != nil {
		err = errors.Join(err, t.err)
	}
	if err != nil {
		err = fmt.Errorf("tracefs: %w", err)
	}
	return evs, gaps, err
}

func (t *linuxTrace) Close() error {
	select {
	case <-t.stop:
	default:
		close(t.stop)
		<-t.done
	}
	err := t.in.Close()
	t.info.Removed = err == nil
	if t.in.LeftMounted {
		t.info.LeftMounted = t.in.Root
	}
	if _, serr := os.Stat(t.in.Dir); serr == nil {
		t.info.Removed = false
	}
	return err
}
func supported() error { return nil }

// scanPage reads a page's event times and types, without decoding their
// fields (a page of n bytes costs at most n/4 steps).
func scanPage(page []byte, layout tracefs.PageLayout, switchID, idleID int) (pageScan, error) {
	pr, err := tracefs.ReadPage(page, layout)
	if err != nil {
		return pageScan{}, err
	}
	s := pageScan{Lost: pr.Header.Lost}
	for pr.Next() {
		e := pr.Event()
		t := int64(min(e.Timestamp, math.MaxInt64))
		if !s.Events {
			s.Events, s.First = true, t
		}
		s.Last = t
		switch int(e.Type) {
		case switchID:
			if !s.HasSwitch {
				s.HasSwitch, s.Switch = true, t
			}
		case idleID:
			if !s.HasIdle {
				s.HasIdle, s.Idle = true, t
			}
		}
	}
	return s, pr.Err()
}

// tracedCPUs are the CPUs to trace, nil for every one, and the online
// CPUs it leaves out. Only a process pinned away from some online CPU
// (taskset) is traced on its CPUs alone: what runs elsewhere cannot run
// its thread, and its timers expire where it runs. Not on a machine with
// nohz_full CPUs, where an hrtimer armed on one is queued on a
// housekeeping CPU (get_nohz_timer_target), nor where the affinity or the
// online CPUs cannot be read (more than 1,024 CPUs: unix.CPUSet's size).
// The affinity is this thread's as the trace begins, which the
// measuring thread's is (Go's threads inherit it); a later change (taskset
// -a -p, a cpuset, a CPU plugged in) is not followed.
func tracedCPUs() (traced, untraced []int) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, nil
	}
	online, err := onlineCPUs()
	if err != nil {
		return nil, nil
	}
	if b, err := os.ReadFile("/sys/devices/system/cpu/nohz_full"); err == nil {
		if isolated, err := timerinfo.ParseCPUList(string(b)); err == nil && len(isolated) > 0 {
			return nil, nil
		}
	}
	for _, c := range online {
		if set.IsSet(c) {
			traced = append(traced, c)
		} else {
			untraced = append(untraced, c)
		}
	}
	if len(untraced) == 0 || len(traced) == 0 {
		return nil, nil
	}
	return traced, untraced
}

// onlineCPUs are the CPUs online now, in order.
func onlineCPUs() ([]int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return nil, err
	}
	cpus, err := timerinfo.ParseCPUList(string(b))
	slices.Sort(cpus)
	return slices.Compact(cpus), err
}
