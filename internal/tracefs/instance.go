package tracefs

//lint:file-ignore U1000 the unexported fields are the Linux reader's; no other OS has tracefs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// InstanceName is the tracefs instance Open makes, under instances/: a
// buffer of tickscope's own with its own settings, beside the top-level
// buffer and any other instance, which it never touches.
const InstanceName = "tickscope-explain"

// ErrUnsupported is Open's error where there is no tracefs (every OS but
// Linux).
var ErrUnsupported = errors.New("tracefs: tracing needs Linux")

// Options says what Open enables.
type Options struct {
	// Events are "system:event" names (timer:hrtimer_start), each enabled
	// only if this kernel has it.
	Events []string
	// BufferKB, when above 0, sets the instance's per-CPU buffer size.
	BufferKB int
	// CPUs, when not nil, are the CPUs the instance records
	// (tracing_cpumask; an empty list records none); nil records every
	// CPU.
	CPUs []int
	// Waiting, when set, is called once if another run holds the instance
	// (another tickscope explain, or a test): Open waits for it to end, or
	// for ctx.
	Waiting func()
}

// Instance is tickscope's tracefs instance, made by Open, removed by
// Close.
type Instance struct {
	// Root is where tracefs is mounted; Dir the instance's directory.
	Root string
	Dir  string
	// Mounted is true when tracefs was not mounted and Open mounted it at
	// Root: Close unmounts it, and the caller should say so.
	Mounted bool
	// LeftMounted is true when Close could not unmount tracefs, which
	// Open mounted, because it was in use (EBUSY): it stays mounted at
	// Root, and the caller should say so.
	LeftMounted bool
	// RemovedLeftover is true when an instance of ours, left behind by a
	// run that did not end cleanly, was removed first.
	RemovedLeftover bool
	// Enabled and Missing split Options.Events: those enabled, and those
	// this kernel does not have.
	Enabled []string
	Missing []string

	readers map[*CPUReader]bool
	closed  bool
	lockFD  int // the instances directory, flocked; -1 when not held
}

// ErrBusy is Open's error when ctx ended while another run held the
// instance.
var ErrBusy = errors.New("tracefs: another run holds the instance " + InstanceName)

// Open makes the instance InstanceName (removing a leftover one first),
// sets its trace_clock to mono, so that event times are CLOCK_MONOTONIC
// nanoseconds, enables the events this kernel has and starts it. Where
// tracefs is not mounted, Open mounts it (Mounted says so). It needs
// root, and Linux (ErrUnsupported elsewhere); it never writes a file of
// the top-level buffer.
//
// One run at a time owns the instance: Open holds an exclusive flock(2) on
// the instances directory until Close, and waits while another run holds
// it (opts.Waiting says so, once), so that a second run never takes the
// first's instance for a leftover and removes it. A run that waits holds
// no file of tracefs open between its tries, so the run it waits on can
// unmount the tracefs it mounted; the waiting run then mounts its own.
func Open(ctx context.Context, opts Options) (*Instance, error) { return open(ctx, opts) }

// Close stops the instance, closes its CPU readers, removes it, and
// unmounts tracefs if Open mounted it; when tracefs is in use, it leaves
// it mounted (LeftMounted) and that is not an error.
func (in *Instance) Close() error {
	if in.closed {
		return nil
	}
	in.closed = true
	return in.close()
}

// splitEvent checks a "system:event" name and gives its two parts.
func splitEvent(name string) (system, event string, err error) {
	system, event, ok := strings.Cut(name, ":")
	if !ok || !validName(system) || !validName(event) {
		return "", "", fmt.Errorf("tracefs: event %q is not system:event", name)
	}
	return system, event, nil
}

func validName(s string) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// Format reads a "system:event"'s layout from the instance.
func (in *Instance) Format(name string) (*Format, error) {
	system, event, err := splitEvent(name)
	if err != nil {
		return nil, err
	}
	b, err := readLimited(filepath.Join(in.Dir, "events", system, event, "format"))
	if err != nil {
		return nil, err
	}
	return ParseFormat(b)
}

// PageLayout reads the instance's events/header_page and checks its
// events/header_event.
func (in *Instance) PageLayout() (PageLayout, error) {
	b, err := readLimited(filepath.Join(in.Dir, "events", "header_event"))
	if err != nil {
		return PageLayout{}, err
	}
	h, err := ParseHeaderEvent(b)
	if err != nil {
		return PageLayout{}, err
	}
	if err := h.Check(); err != nil {
		return PageLayout{}, err
	}
	if b, err = readLimited(filepath.Join(in.Dir, "events", "header_page")); err != nil {
		return PageLayout{}, err
	}
	return ParseHeaderPage(b)
}

// Stats reads a CPU's per_cpu/cpuN/stats in the instance.
func (in *Instance) Stats(cpu int) (Stats, error) {
	b, err := readLimited(filepath.Join(in.Dir, "per_cpu", "cpu"+strconv.Itoa(cpu), "stats"))
	if err != nil {
		return Stats{}, err
	}
	return ParseStats(b)
}

// CPUMask is cpus as tracing_cpumask takes them: a hexadecimal mask in
// words of 32 bits, the most significant first, separated by commas.
func CPUMask(cpus []int) string {
	top := -1
	for _, c := range cpus {
		top = max(top, c)
	}
	words := make([]uint32, top/32+1)
	for _, c := range cpus {
		if c >= 0 {
			words[c/32] |= 1 << (c % 32)
		}
	}
	var b strings.Builder
	for i := len(words) - 1; i >= 0; i-- {
		if i == len(words)-1 {
			fmt.Fprintf(&b, "%x", words[i])
		} else {
			fmt.Fprintf(&b, ",%08x", words[i])
		}
	}
	return b.String()
}

// CPUs lists the CPUs the instance has a buffer for.
func (in *Instance) CPUs() ([]int, error) {
	ents, err := os.ReadDir(filepath.Join(in.Dir, "per_cpu"))
	if err != nil {
		return nil, err
	}
	var cpus []int
	for _, e := range ents {
		if n, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "cpu")); err == nil && strings.HasPrefix(e.Name(), "cpu") {
			cpus = append(cpus, n)
		}
	}
	return cpus, nil
}

// CPUReader reads one CPU's ring buffer, a page at a time, from its
// per_cpu/cpuN/trace_pipe_raw (which consumes what it gives).
type CPUReader struct {
	CPU      int
	PageSize int
	fd       int
	buf      []byte
	in       *Instance
}

// OpenCPU opens a CPU's trace_pipe_raw, without blocking: ReadPage gives
// what is there now.
func (in *Instance) OpenCPU(cpu int) (*CPUReader, error) { return in.openCPU(cpu) }

// ReadPage reads the next page (PageSize bytes, reused by the next call),
// or nil when the CPU's buffer has nothing to read now.
func (r *CPUReader) ReadPage() ([]byte, error) { return r.readPage() }

// Close closes the reader.
func (r *CPUReader) Close() error { return r.close() }

// readLimited reads a tracefs text file of at most MaxFormatBytes.
func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFormatBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFormatBytes {
		return nil, fmt.Errorf("tracefs: %s is longer than %d bytes", path, MaxFormatBytes)
	}
	return b, nil
}
