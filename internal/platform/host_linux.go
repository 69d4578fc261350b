package platform

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tickscope/tickscope/internal/nativewait"
	"github.com/tickscope/tickscope/internal/seam"

	"github.com/tickscope/tickscope/internal/timerinfo"
)

// Supported is nil: tickscope serves Linux.
func Supported() error { return nil }

// New returns the host tickscope runs on, with the extra portable methods
// among its own.
func New(extra ...PortableMethod) seam.Host { return &linuxHost{extra: extra} }

type linuxHost struct{ extra []PortableMethod }

// Now reads CLOCK_MONOTONIC, the clock of clock_nanosleep's deadlines.
func (h *linuxHost) Now() int64 { return nativewait.Now() }

func (h *linuxHost) Methods() []seam.Method {
	return append([]seam.Method{
		{Name: "clock-abs", Summary: "clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) on a periodic schedule, as cyclictest measures", Schedule: seam.Periodic},
		{Name: "nanosleep", Summary: "nanosleep of the delay (relative)", Schedule: seam.Relative},
		{Name: "timerfd", Summary: "a periodic timerfd on CLOCK_MONOTONIC (an expiration missed during a stall is delivered at once)", Schedule: seam.Periodic, CatchesUp: true},
		{Name: "epoll", Summary: "epoll_wait with a timeout of whole milliseconds", WholeMilliseconds: true, Schedule: seam.Relative},
		{Name: "hybrid", Summary: fmt.Sprintf("clock_nanosleep to %d µs before each deadline, then spin (spin_sleep's fixed Linux margin; periodic)", nativewait.SpinSleepMargin/time.Microsecond), Schedule: seam.Periodic},
	}, portableMethods(h.extra)...)
}

func (h *linuxHost) NewWaiter(method string, delay time.Duration) (seam.Waiter, error) {
	switch method {
	case "clock-abs":
		return clockAbsWaiter{}, nil
	case "nanosleep":
		return nanosleepWaiter{delay: unix.NsecToTimespec(int64(delay))}, nil
	case "timerfd":
		return &timerfdWaiter{fd: -1, interval: unix.NsecToTimespec(int64(delay))}, nil
	case "epoll":
		return newEpollWaiter(delay)
	case "hybrid":
		return hybridWaiter{sleepUntil: nativewait.SleepUntil, close: clockAbsWaiter{}.Close, now: h.Now, margin: int64(nativewait.SpinSleepMargin)}, nil
	}
	if w := newPortableWaiter(method, delay, h.Now, h.extra); w != nil {
		return w, nil
	}
	return nil, fmt.Errorf("unknown method %q", method)
}

// timerfdWaiter reads a periodic timerfd armed, at the first wait, to
// expire at that wait's deadline and every interval after.
type timerfdWaiter struct {
	fd       int
	interval unix.Timespec
}

func (w *timerfdWaiter) Wait(deadline int64) error {
	if w.fd < 0 {
		fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC)
		if err != nil {
			return wrapErr("timerfd_create", err)
		}
		w.fd = fd
		spec := unix.ItimerSpec{Interval: w.interval, Value: unix.NsecToTimespec(deadline)}
		if err := unix.TimerfdSettime(fd, unix.TFD_TIMER_ABSTIME, &spec, nil); err != nil {
			return wrapErr("timerfd_settime", err)
		}
	}
	var buf [8]byte
	for {
		_, err := unix.Read(w.fd, buf[:])
		if err != unix.EINTR {
			return wrapErr("read(timerfd)", err)
		}
	}
}

func (w *timerfdWaiter) Close() error {
	if w.fd >= 0 {
		return unix.Close(w.fd)
	}
	return nil
}

// epollWaiter waits with epoll_wait's timeout on an empty epoll set.
type epollWaiter struct {
	fd int
	ms int
}

func newEpollWaiter(delay time.Duration) (*epollWaiter, error) {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, wrapErr("epoll_create1", err)
	}
	return &epollWaiter{fd: fd, ms: int(delay / time.Millisecond)}, nil
}

func (w *epollWaiter) Wait(int64) error {
	events := make([]unix.EpollEvent, 1)
	for {
		_, err := unix.EpollWait(w.fd, events, w.ms)
		if err != unix.EINTR {
			return wrapErr("epoll_wait", err)
		}
	}
}

func (w *epollWaiter) Close() error { return unix.Close(w.fd) }

// clockAbsWaiter sleeps with clock_nanosleep to each absolute deadline on
// the measuring thread, at the slack the measurement set.
type clockAbsWaiter struct{}

func (clockAbsWaiter) Wait(deadline int64) error { return nativewait.SleepUntil(deadline) }

func (clockAbsWaiter) Close() error { return nil }

type nanosleepWaiter struct{ delay unix.Timespec }

func (w nanosleepWaiter) Wait(int64) error {
	req := w.delay
	for {
		var rem unix.Timespec
		err := unix.Nanosleep(&req, &rem)
		if err != unix.EINTR {
			return wrapErr("nanosleep", err)
		}
		req = rem
	}
}

func (nanosleepWaiter) Close() error { return nil }

func wrapErr(call string, err error) error {
	if err == nil {
		return nil
	}
	return &seam.OSError{Call: call, Err: err}
}

func (h *linuxHost) PrepareThread() (string, func()) {
	// Raising priority needs CAP_SYS_NICE (or RLIMIT_NICE): without it the
	// thread stays where cyclictest --default-system measures, SCHED_OTHER.
	// Nothing is changed, so there is nothing to restore.
	nice, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	if err != nil {
		return "SCHED_OTHER", func() {}
	}
	// The raw system call returns 20 - nice.
	return fmt.Sprintf("SCHED_OTHER, nice %d", 20-nice), func() {}
}

func (h *linuxHost) Apply(s timerinfo.Setting) (timerinfo.Setting, func() error, error) {
	noop := func() error { return nil }
	if s.Resolution100ns != 0 {
		return timerinfo.Setting{}, noop, fmt.Errorf("a timer resolution request: %w", seam.ErrUnsupported)
	}
	var granted timerinfo.Setting
	releaseDMA := noop
	if s.CPUDMALatencyUs != nil {
		release, err := holdDMALatency(*s.CPUDMALatencyUs)
		if err != nil {
			return timerinfo.Setting{}, noop, err
		}
		value := *s.CPUDMALatencyUs
		granted.CPUDMALatencyUs, releaseDMA = &value, release
	}
	if s.SlackNs == 0 {
		return granted, releaseDMA, nil
	}
	previous, err := threadSlack()
	if err != nil {
		releaseDMA()
		return timerinfo.Setting{}, noop, err
	}
	if err := unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(s.SlackNs), 0, 0, 0); err != nil {
		releaseDMA()
		return timerinfo.Setting{}, noop, wrapErr("prctl(PR_SET_TIMERSLACK)", err)
	}
	if granted.SlackNs, err = threadSlack(); err != nil {
		releaseDMA()
		return timerinfo.Setting{}, noop, err
	}
	release := func() error {
		slackErr := wrapErr("prctl(PR_SET_TIMERSLACK)", unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(previous), 0, 0, 0))
		return errors.Join(slackErr, releaseDMA())
	}
	return granted, release, nil
}

// holdDMALatency holds a PM-QoS CPU latency request: it lasts while the
// file stays open, and the kernel drops it when the file is closed, also
// when the process is killed.
func holdDMALatency(us int32) (release func() error, err error) {
	f, err := os.OpenFile("/dev/cpu_dma_latency", os.O_WRONLY, 0)
	if err != nil {
		return nil, &seam.OSError{Call: "open /dev/cpu_dma_latency (needs root)", Err: err}
	}
	var buf [4]byte
	binary.NativeEndian.PutUint32(buf[:], uint32(us))
	if _, err := f.Write(buf[:]); err != nil {
		f.Close()
		return nil, &seam.OSError{Call: "write /dev/cpu_dma_latency", Err: err}
	}
	return f.Close, nil
}

func threadSlack() (int64, error) {
	v, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil {
		return 0, wrapErr("prctl(PR_GET_TIMERSLACK)", err)
	}
	return int64(v), nil
}

func (h *linuxHost) Observe() seam.Observation {
	slack, _ := threadSlack()
	return seam.Observation{TimerSlackNs: slack}
}

func (h *linuxHost) Query() (*timerinfo.Report, error) {
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		return nil, wrapErr("uname", err)
	}
	l := &timerinfo.Linux{
		KernelRelease: unix.ByteSliceToString(uts.Release[:]),
		KernelVersion: unix.ByteSliceToString(uts.Version[:]),
		Root:          os.Geteuid() == 0,
		CPUsOnline:    onlineCPUs(),
	}
	var res unix.Timespec
	if err := unix.ClockGetres(unix.CLOCK_MONOTONIC_COARSE, &res); err != nil {
		return nil, wrapErr("clock_getres(CLOCK_MONOTONIC_COARSE)", err)
	}
	if n := res.Nano(); n > 0 {
		l.HZ = int64(time.Second) / n
	}
	l.HighResTimers = "unknown"
	if err := unix.ClockGetres(unix.CLOCK_MONOTONIC, &res); err == nil {
		l.HighResTimers = "no"
		if res.Nano() == 1 {
			l.HighResTimers = "yes"
		}
	}
	facts := kernelConfigFacts(l.KernelRelease, l.KernelVersion)
	l.KernelConfigSource, l.NoHZ, l.Preemption = facts.source, facts.noHZ, facts.preemption
	l.Clocksource = readTrimmed("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	l.AvailableClocksource = strings.Fields(readTrimmed("/sys/devices/system/clocksource/clocksource0/available_clocksource"))

	// The slack of the thread that queries: lock so that the value read is
	// this goroutine's thread's, not whichever thread runs it next.
	runtime.LockOSThread()
	l.TimerSlackNs, _ = threadSlack()
	runtime.UnlockOSThread()

	if v, err := readDMALatency(); err != nil {
		l.CPUDMALatencyErr = err.Error()
	} else {
		l.CPUDMALatencyUs = &v
	}
	l.CPUIdleDriver = readTrimmed("/sys/devices/system/cpu/cpuidle/current_driver")
	l.CPUIdleGovernor = readTrimmed("/sys/devices/system/cpu/cpuidle/current_governor_ro")
	if l.CPUIdleGovernor == "" {
		l.CPUIdleGovernor = readTrimmed("/sys/devices/system/cpu/cpuidle/current_governor")
	}
	l.CPUIdleStates = readIdleStates("/sys/devices/system/cpu/cpu0/cpuidle")
	l.CapSysNice = hasCapability(readFile("/proc/self/status"), unix.CAP_SYS_NICE)

	rep := &timerinfo.Report{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), Linux: l, Warnings: []string{}}
	if l.HighResTimers == "no" {
		rep.Warnings = append(rep.Warnings, "high-resolution timers are not active: every wait ends on a tick")
	}
	return rep, nil
}

func readFile(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}

func readTrimmed(path string) string { return strings.TrimSpace(string(readFile(path))) }

// kernelFacts is what the query reads from the running kernel's build
// configuration: the file, NO_HZ and the preemption model.
type kernelFacts struct{ source, noHZ, preemption string }

var (
	kernelFactsOnce sync.Once
	kernelFactsRead kernelFacts
)

// kernelConfigFacts reads and decompresses the configuration once per
// process (the running kernel's cannot change), not at every query of a
// watch or a holder's check.
func kernelConfigFacts(release, version string) kernelFacts {
	kernelFactsOnce.Do(func() {
		config, source := readKernelConfig(release)
		kernelFactsRead = kernelFacts{source, timerinfo.NoHZFromConfig(config), timerinfo.PreemptionModel(version, config)}
	})
	return kernelFactsRead
}

// readKernelConfig returns the running kernel's build configuration and the
// file it came from, or nil and "" when none is readable.
func readKernelConfig(release string) ([]byte, string) {
	if f, err := os.Open("/proc/config.gz"); err == nil {
		defer f.Close()
		if zr, err := gzip.NewReader(f); err == nil {
			if b, err := io.ReadAll(io.LimitReader(zr, 16<<20)); err == nil {
				return b, "/proc/config.gz"
			}
		}
	}
	path := "/boot/config-" + release
	if b, err := os.ReadFile(path); err == nil {
		return b, path
	}
	return nil, ""
}

// readDMALatency reads the aggregate PM-QoS CPU latency limit. Opening the
// device adds a request at the default value (no constraint), which the
// close removes: the read changes nothing.
func readDMALatency() (int32, error) {
	f, err := os.Open("/dev/cpu_dma_latency")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var buf [4]byte
	if _, err := io.ReadFull(f, buf[:]); err != nil {
		return 0, fmt.Errorf("read /dev/cpu_dma_latency: %w", err)
	}
	return int32(binary.NativeEndian.Uint32(buf[:])), nil
}

func readIdleStates(dir string) []timerinfo.CPUIdleState {
	entries, _ := filepath.Glob(filepath.Join(dir, "state*"))
	states := make([]timerinfo.CPUIdleState, 0, len(entries))
	for i := 0; ; i++ {
		d := filepath.Join(dir, "state"+strconv.Itoa(i))
		if _, err := os.Stat(d); err != nil {
			break
		}
		lat, _ := strconv.ParseInt(readTrimmed(filepath.Join(d, "latency")), 10, 64)
		states = append(states, timerinfo.CPUIdleState{
			Name:          readTrimmed(filepath.Join(d, "name")),
			Description:   readTrimmed(filepath.Join(d, "desc")),
			ExitLatencyUs: lat,
			Disabled:      readTrimmed(filepath.Join(d, "disable")) == "1",
		})
	}
	return states
}

func onlineCPUs() int {
	n, err := timerinfo.CountCPUList(readTrimmed("/sys/devices/system/cpu/online"))
	if err != nil {
		return runtime.NumCPU()
	}
	return n
}

// hasCapability reports whether /proc/self/status shows cap in CapEff.
func hasCapability(status []byte, capability int) bool {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "CapEff:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(rest), 16, 64)
			return err == nil && mask&(1<<uint(capability)) != 0
		}
	}
	return false
}

func (h *linuxHost) CPUTime() time.Duration { return rusageCPU() }
