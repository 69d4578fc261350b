package tracefs

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/testlock"
	"golang.org/x/sys/unix"
)

// topLevel is what Open must leave as it found it in the top-level buffer.
var topLevel = []string{"tracing_on", "current_tracer", "trace_clock", "set_event", "buffer_size_kb", "tracing_cpumask"}

func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, f := range topLevel {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		m[f] = string(b)
	}
	return m
}

func sameTopLevel(t *testing.T, root string, before map[string]string, when string) {
	t.Helper()
	after := snapshot(t, root)
	for _, f := range topLevel {
		if after[f] != before[f] {
			t.Errorf("%s: top-level %s changed from %q to %q", when, f, before[f], after[f])
		}
	}
}

// needTracefs skips unless root on a kernel with tracefs, and gives its
// mount point, mounting it for the test (and unmounting it after) when it
// is not mounted; that case first checks that Open mounts and Close
// unmounts it.
func needTracefs(t *testing.T) string {
	t.Helper()
	// One test at a time, across the packages go test runs side by side,
	// may own the instance.
	testlock.Tracefs(t)
	root, err := findTracefs()
	if err != nil {
		t.Fatal(err)
	}
	if root != "" {
		return root
	}
	in, err := Open(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !in.Mounted || in.Root != defaultMount {
		t.Errorf("tracefs was not mounted, and Open says Mounted %v at %s", in.Mounted, in.Root)
	}
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	if root, _ := findTracefs(); root != "" {
		t.Fatalf("Close left tracefs mounted at %s", root)
	}
	if err := unix.Mount("nodev", defaultMount, "tracefs", 0, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Unmount(defaultMount, 0) })
	return defaultMount
}

var explainEvents = []string{
	"timer:hrtimer_start", "timer:hrtimer_expire_entry", "timer:hrtimer_expire_exit",
	"sched:sched_waking", "sched:sched_wakeup", "sched:sched_switch", "sched:sched_migrate_task",
	"irq:irq_handler_entry", "irq:irq_handler_exit", "irq:softirq_entry", "irq:softirq_exit",
	"irq_vectors:local_timer_entry", "irq_vectors:local_timer_exit",
	"power:cpu_idle", "nosuch:event",
}

func TestInstance(t *testing.T) {
	root := needTracefs(t)
	before := snapshot(t, root)
	in, err := Open(context.Background(), Options{Events: explainEvents, BufferKB: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if !slices.Equal(in.Missing, []string{"nosuch:event"}) || !slices.Contains(in.Enabled, "timer:hrtimer_start") {
		t.Errorf("enabled %v, missing %v", in.Enabled, in.Missing)
	}
	clock, _ := os.ReadFile(filepath.Join(in.Dir, "trace_clock"))
	if !slices.Contains(strings.Fields(string(clock)), "[mono]") {
		t.Errorf("instance trace_clock %q", clock)
	}
	sameTopLevel(t, root, before, "while open")

	layout, err := in.PageLayout()
	if err != nil {
		t.Fatal(err)
	}
	hs, err := in.Format("timer:hrtimer_start")
	if err != nil {
		t.Fatal(err)
	}
	// Timer activity of our own: each sleep starts an hrtimer.
	start := uint64(monoNow())
	for range 50 {
		time.Sleep(200 * time.Microsecond)
	}
	end := uint64(monoNow())
	if err := writeFile(in.Dir, "tracing_on", "0"); err != nil {
		t.Fatal(err)
	}
	cpus, err := in.CPUs()
	if err != nil || len(cpus) == 0 {
		t.Fatal(cpus, err)
	}
	starts, pages := 0, 0
	for _, cpu := range cpus {
		r, err := in.OpenCPU(cpu)
		if err != nil {
			t.Fatal(err)
		}
		for pages < 10000 {
			p, err := r.ReadPage()
			if err != nil {
				t.Fatal(err)
			}
			if p == nil {
				break
			}
			pages++
			pr, err := ReadPage(p, layout)
			if err != nil {
				t.Fatal(err)
			}
			for pr.Next() {
				e := pr.Event()
				if e.Type != hs.ID {
					continue
				}
				exp, err := hs.Int(e.Data, "expires")
				if err != nil {
					t.Fatal(err)
				}
				if e.Timestamp >= start && e.Timestamp <= end && uint64(exp) >= start {
					starts++
				}
			}
			if pr.Err() != nil {
				t.Fatal(pr.Err())
			}
		}
		if _, err := in.Stats(cpu); err != nil {
			t.Fatal(err)
		}
	}
	if starts == 0 {
		t.Errorf("no hrtimer_start between %d and %d in %d pages", start, end, pages)
	}
	t.Logf("%d pages, %d hrtimer_start events in the %d µs of sleeps", pages, starts, (end-start)/1000)
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(in.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("instance still there after Close: %v", err)
	}
	sameTopLevel(t, root, before, "after Close")
}

// With CPUs set, the instance records those CPUs only: its
// tracing_cpumask says them, a thread sleeping on CPU 1 leaves CPU 1's
// buffer empty while one on CPU 0 fills CPU 0's, and the top level's
// mask is untouched.
func TestInstanceCPUs(t *testing.T) {
	root := needTracefs(t)
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		t.Fatal(err)
	}
	if !all.IsSet(0) || !all.IsSet(1) {
		t.Skip("needs CPUs 0 and 1")
	}
	before := snapshot(t, root)
	in, err := Open(context.Background(), Options{Events: explainEvents, CPUs: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	mask, err := os.ReadFile(filepath.Join(in.Dir, "tracing_cpumask"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimLeft(strings.ReplaceAll(strings.TrimSpace(string(mask)), ",", ""), "0"); got != "1" {
		t.Errorf("the instance's tracing_cpumask reads %q, want CPU 0 alone", mask)
	}
	// Each sleep starts an hrtimer on the sleeping thread's CPU.
	sleepOn := func(cpu int) error {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var set unix.CPUSet
		set.Set(cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return err
		}
		defer unix.SchedSetaffinity(0, &all)
		for range 50 {
			time.Sleep(200 * time.Microsecond)
		}
		return nil
	}
	done := make(chan error)
	go func() { done <- sleepOn(1) }()
	if err := sleepOn(0); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	cpus, err := in.CPUs()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cpus {
		st, err := in.Stats(c)
		if err != nil {
			t.Fatal(err)
		}
		if c == 0 && st.Entries == 0 || c != 0 && st.Entries != 0 {
			t.Errorf("CPU %d (traced: %v) has %d entries", c, c == 0, st.Entries)
		}
	}
	sameTopLevel(t, root, before, "while open")
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	sameTopLevel(t, root, before, "after Close")
}

func monoNow() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// TestInstanceAfterCrash: a process killed with the instance open leaves
// it behind; the next Open removes it, and the top level is as it was.
func TestInstanceAfterCrash(t *testing.T) {
	if os.Getenv("TICKSCOPE_TRACEFS_CRASH") == "1" {
		if _, err := Open(context.Background(), Options{Events: []string{"sched:sched_switch"}}); err != nil {
			os.Exit(3)
		}
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	root := needTracefs(t)
	before := snapshot(t, root)
	cmd := exec.Command(os.Args[0], "-test.run=^TestInstanceAfterCrash$")
	cmd.Env = append(os.Environ(), "TICKSCOPE_TRACEFS_CRASH=1")
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child did not die of SIGKILL: %v", err)
	}
	dir := filepath.Join(root, "instances", InstanceName)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("no leftover instance: %v", err)
	}
	sameTopLevel(t, root, before, "after the crash")
	in, err := Open(context.Background(), Options{Events: []string{"sched:sched_switch"}})
	if err != nil {
		t.Fatal(err)
	}
	if !in.RemovedLeftover {
		t.Error("Open did not say it removed the leftover instance")
	}
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("instance still there: %v", err)
	}
	sameTopLevel(t, root, before, "after the next run")
}

func TestFindTracefsUnescape(t *testing.T) {
	if got := unescapeMount(`/mnt/a\040b`); got != "/mnt/a b" {
		t.Errorf("%q", got)
	}
	if !hasClock("local global [mono] boot", "mono") || hasClock("local global", "mono") {
		t.Error("hasClock")
	}
	for _, bad := range []string{"sched", "sched:", ":x", "../x:y", "a:b/c", "a:.."} {
		if _, _, err := splitEvent(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestInstanceOneRunAtATime: a second Open while the first's instance is
// open waits, says so, and takes nothing from the first (its instance is
// not a leftover to remove); it ends with ctx, or gets the instance once
// the first has closed it.
func TestInstanceOneRunAtATime(t *testing.T) {
	needTracefs(t)
	first, err := Open(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()

	ctx, cancel := context.WithCancel(context.Background())
	waiting := make(chan struct{})
	_, err = func() (*Instance, error) {
		go func() { <-waiting; cancel() }()
		return Open(ctx, Options{Waiting: func() { close(waiting) }})
	}()
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("a second Open, stopped while it waited: %v, want ErrBusy", err)
	}
	if _, err := os.Stat(first.Dir); err != nil {
		t.Fatalf("the first run's instance is gone: %v", err)
	}

	type opened struct {
		in  *Instance
		err error
	}
	second := make(chan opened, 1)
	waiting = make(chan struct{})
	go func() {
		in, err := Open(context.Background(), Options{Waiting: func() { close(waiting) }})
		second <- opened{in, err}
	}()
	<-waiting
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	got := <-second
	if got.err != nil {
		t.Fatal(got.err)
	}
	defer got.in.Close()
	if got.in.RemovedLeftover {
		t.Error("the second run took the first's closed instance for a leftover")
	}
}
