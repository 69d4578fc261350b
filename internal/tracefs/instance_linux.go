package tracefs

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// defaultMount is where tracefs is mounted since Linux 4.1, and where
// Open mounts it when it is mounted nowhere.
const defaultMount = "/sys/kernel/tracing"

// findTracefs gives where tracefs is mounted: /sys/kernel/tracing if it is
// mounted there, otherwise the first tracefs mount in this process's
// mount table (/sys/kernel/debug/tracing, debugfs's automount, on older
// systems), or "" if none.
func findTracefs() (string, error) {
	ms, err := tracefsMounts()
	if err != nil || len(ms) == 0 {
		return "", err
	}
	if slices.Contains(ms, defaultMount) {
		return defaultMount, nil
	}
	return ms[0], nil
}

// tracefsMounts gives the mount points of tracefs in this process's
// mount table, in its order.
func tracefsMounts() ([]string, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	var ms []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// "36 35 0:31 / /sys/kernel/tracing rw,... shared:15 - tracefs nodev rw"
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 1 || g[0] != "tracefs" {
			continue
		}
		ms = append(ms, unescapeMount(f[4]))
	}
	return ms, sc.Err()
}

// unmount is unix.Unmount; a test replaces it.
var unmount = unix.Unmount

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func littleEndianHost() bool { return binary.NativeEndian.Uint16([]byte{1, 0}) == 1 }

// errUnmounted is lock's when the tracefs it waited on was unmounted
// meanwhile (by the run that held the instance and had mounted it).
var errUnmounted = errors.New("tracefs: unmounted while waiting for the instance")

func open(ctx context.Context, opts Options) (*Instance, error) {
	waiting := opts.Waiting
	if waiting != nil {
		said := false
		waiting = func() {
			if !said {
				said = true
				opts.Waiting()
			}
		}
	}
	for {
		in, err := openOnce(ctx, opts, waiting)
		if !errors.Is(err, errUnmounted) {
			return in, err
		}
		// Look for tracefs again, and mount it if none is left: this run
		// then unmounts it.
	}
}

func openOnce(ctx context.Context, opts Options, waiting func()) (in *Instance, err error) {
	if !littleEndianHost() {
		return nil, errors.New("tracefs: this reader decodes little-endian ring buffers; this host is big-endian")
	}
	for _, e := range opts.Events {
		if _, _, err := splitEvent(e); err != nil {
			return nil, err
		}
	}
	root, err := findTracefs()
	if err != nil {
		return nil, fmt.Errorf("tracefs: reading the mount table: %w", err)
	}
	in = &Instance{Root: root, readers: map[*CPUReader]bool{}, lockFD: -1}
	if root == "" {
		if err := unix.Mount("nodev", defaultMount, "tracefs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			return nil, fmt.Errorf("tracefs: not mounted, and mounting it at %s failed: %w", defaultMount, err)
		}
		in.Root, in.Mounted = defaultMount, true
	}
	in.Dir = filepath.Join(in.Root, "instances", InstanceName)
	defer func() {
		if err != nil {
			err = errors.Join(err, in.close())
			if in.LeftMounted {
				err = fmt.Errorf("%w (tracefs left mounted at %s: in use)", err, in.Root)
			}
			in = nil
		}
	}()
	if _, err := os.Stat(filepath.Join(in.Root, "instances")); err != nil {
		return in, fmt.Errorf("tracefs: this kernel has no instances: %w", err)
	}
	if err := in.lock(ctx, waiting); err != nil {
		return in, err
	}
	if _, err := os.Stat(in.Dir); err == nil {
		if err := removeInstance(in.Dir); err != nil {
			return in, fmt.Errorf("tracefs: removing the leftover instance %s: %w", in.Dir, err)
		}
		in.RemovedLeftover = true
	}
	if err := os.Mkdir(in.Dir, 0o700); err != nil {
		return in, fmt.Errorf("tracefs: making the instance: %w", err)
	}
	// Stopped while it is set up; started when it is.
	if err := writeFile(in.Dir, "tracing_on", "0"); err != nil {
		return in, err
	}
	clocks, err := os.ReadFile(filepath.Join(in.Dir, "trace_clock"))
	if err != nil {
		return in, err
	}
	if !hasClock(string(clocks), "mono") {
		return in, fmt.Errorf("tracefs: this kernel has no mono trace clock (it has %s)", strings.TrimSpace(string(clocks)))
	}
	if err := writeFile(in.Dir, "trace_clock", "mono"); err != nil {
		return in, err
	}
	if opts.BufferKB > 0 {
		if err := writeFile(in.Dir, "buffer_size_kb", strconv.Itoa(opts.BufferKB)); err != nil {
			return in, err
		}
	}
	if opts.CPUs != nil {
		if err := writeFile(in.Dir, "tracing_cpumask", CPUMask(opts.CPUs)); err != nil {
			return in, err
		}
	}
	for _, e := range opts.Events {
		system, event, _ := splitEvent(e)
		dir := filepath.Join(in.Dir, "events", system, event)
		if _, err := os.Stat(filepath.Join(dir, "enable")); errors.Is(err, os.ErrNotExist) {
			in.Missing = append(in.Missing, e)
			continue
		}
		if err := writeFile(dir, "enable", "1"); err != nil {
			return in, err
		}
		in.Enabled = append(in.Enabled, e)
	}
	if err := writeFile(in.Dir, "tracing_on", "1"); err != nil {
		return in, err
	}
	return in, nil
}

// hasClock reports whether trace_clock's list ("local global [mono] ...")
// names the clock.
func hasClock(list, clock string) bool {
	for _, c := range strings.Fields(list) {
		if strings.Trim(c, "[]") == clock {
			return true
		}
	}
	return false
}

func writeFile(dir, name, value string) error {
	p := filepath.Join(dir, name)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fmt.Errorf("tracefs: %w", err)
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("tracefs: writing %q to %s: %w", value, p, err)
	}
	return nil
}

// removeInstance stops an instance and removes it. The kernel refuses
// (EBUSY) while a process still holds one of its files open.
func removeInstance(dir string) error {
	_ = writeFile(dir, "tracing_on", "0")
	if err := unix.Rmdir(dir); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("rmdir %s: %w", dir, err)
	}
	return nil
}

// lock takes the flock on the instances directory that makes this run
// the instance's owner, trying every 100 ms (until ctx ends) while
// another run holds it. Only root reaches tracefs, so no other user can
// hold it. Between tries the directory is closed: a run waiting with a
// file of tracefs open would keep the run it waits on from unmounting
// the tracefs that run mounted (EBUSY), so that neither would. When the
// directory has gone meanwhile (that run unmounted tracefs), lock says
// errUnmounted, and Open starts again.
func (in *Instance) lock(ctx context.Context, waiting func()) error {
	dir := filepath.Join(in.Root, "instances")
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for tried := false; ; tried = true {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if tried && errors.Is(err, unix.ENOENT) {
			return errUnmounted
		}
		if err != nil {
			return fmt.Errorf("tracefs: opening %s: %w", dir, err)
		}
		err = unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			in.lockFD = fd
			return nil
		}
		unix.Close(fd)
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("tracefs: locking %s: %w", dir, err)
		}
		if waiting != nil {
			waiting()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", ErrBusy, ctx.Err())
		case <-tick.C:
		}
	}
}

func (in *Instance) close() error {
	var errs []error
	for r := range in.readers {
		errs = append(errs, r.close())
	}
	// The instance is this run's to remove only while it holds the lock:
	// an Open that found it held leaves it to its owner.
	if in.Dir != "" && in.lockFD >= 0 {
		if _, err := os.Stat(in.Dir); err == nil {
			errs = append(errs, removeInstance(in.Dir))
		}
	}
	if in.lockFD >= 0 {
		unix.Close(in.lockFD) // drops the flock
		in.lockFD = -1
	}
	if in.Mounted {
		errs = append(errs, in.unmount())
	}
	return errors.Join(errs...)
}

// unmount unmounts tracefs, which Open mounted. Busy (EBUSY: another
// process has a file of it open) is not an error: it stays mounted, and
// LeftMounted says so.
func (in *Instance) unmount() error {
	err := unmount(in.Root, 0)
	switch {
	case err == nil:
		in.Mounted = false
		return nil
	case errors.Is(err, unix.EBUSY):
		in.LeftMounted = true
		return nil
	}
	return fmt.Errorf("tracefs: unmounting %s, which Open mounted: %w", in.Root, err)
}

func (in *Instance) openCPU(cpu int) (*CPUReader, error) {
	if in.closed {
		return nil, errors.New("tracefs: instance closed")
	}
	size := os.Getpagesize()
	// buffer_subbuf_size_kb (Linux 6.8 on): the size of a read.
	if b, err := os.ReadFile(filepath.Join(in.Dir, "buffer_subbuf_size_kb")); err == nil {
		if kb, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && kb > 0 && kb <= 1<<20 {
			size = kb << 10
		}
	}
	p := filepath.Join(in.Dir, "per_cpu", "cpu"+strconv.Itoa(cpu), "trace_pipe_raw")
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("tracefs: opening %s: %w", p, err)
	}
	r := &CPUReader{CPU: cpu, PageSize: size, fd: fd, buf: make([]byte, size), in: in}
	in.readers[r] = true
	return r, nil
}

func (r *CPUReader) readPage() ([]byte, error) {
	if r.fd < 0 {
		return nil, errors.New("tracefs: reader closed")
	}
	for {
		n, err := unix.Read(r.fd, r.buf)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("tracefs: reading cpu%d's trace_pipe_raw: %w", r.CPU, err)
		case n == 0:
			return nil, nil
		case n != len(r.buf):
			return nil, fmt.Errorf("tracefs: cpu%d's trace_pipe_raw gave %d bytes, not a page of %d", r.CPU, n, len(r.buf))
		}
		return r.buf, nil
	}
}

func (r *CPUReader) close() error {
	if r.fd < 0 {
		return nil
	}
	err := unix.Close(r.fd)
	r.fd = -1
	delete(r.in.readers, r)
	return err
}
