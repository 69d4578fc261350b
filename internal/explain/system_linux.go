package explain

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tickscope/tickscope/internal/attribution"
	"github.com/tickscope/tickscope/internal/procstat"
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
	err   error
	stop  chan struct{}
	done  chan struct{}
}

func (linuxSystem) StartTrace(ctx context.Context, waiting func()) (_ Trace, err error) {
	in, err := tracefs.Open(ctx, tracefs.Options{Events: attribution.Events, BufferKB: BufferKB, Waiting: waiting})
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
	cpus, err := in.CPUs()
	if err != nil {
		return nil, err
	}
	for _, c := range cpus {
		r, err := in.OpenCPU(c)
		if err != nil {
			return nil, err
		}
		t.readers = append(t.readers, r)
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

// drain copies every page there is now.
func (t *linuxTrace) drain() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range t.readers {
		for {
			p, err := r.ReadPage()
			if err != nil {
				t.err = errors.Join(t.err, err)
				break
			}
			if p == nil {
				break
			}
			t.pages[r.CPU] = append(t.pages[r.CPU], slices.Clone(p))
		}
	}
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
	var gaps []attribution.Gap
	for cpu, pages := range t.pages {
		var last int64
		for _, p := range pages {
			pr, perr := tracefs.ReadPage(p, t.layout)
			if perr != nil {
				err = errors.Join(err, perr)
				continue
			}
			first := true
			for pr.Next() {
				e, ok, derr := t.dec.Decode(cpu, pr.Event())
				if derr != nil {
					err = errors.Join(err, derr)
					break
				}
				if first && pr.Header.Lost {
					gaps = append(gaps, attribution.Gap{CPU: cpu, From: last, To: int64(pr.Event().Timestamp)})
				}
				first = false
				last = int64(pr.Event().Timestamp)
				if ok {
					evs = append(evs, e)
				}
			}
			err = errors.Join(err, pr.Err())
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
