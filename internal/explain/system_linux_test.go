package explain

import (
	"context"
	"runtime"
	"slices"
	"testing"

	"github.com/tickscope/tickscope/internal/testlock"
	"golang.org/x/sys/unix"
)

// A trace started on a thread that may run on CPU 0 only records CPU 0
// and reads its buffer alone; the other CPUs are said untraced.
func TestTraceFollowsTheAffinity(t *testing.T) {
	testlock.Tracefs(t)
	sys := NewSystem()
	if ok, why := sys.CanTrace(); !ok {
		t.Skip(why)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var was, only0 unix.CPUSet
	if err := unix.SchedGetaffinity(0, &was); err != nil {
		t.Fatal(err)
	}
	if !was.IsSet(0) || was.Count() < 2 {
		t.Skipf("needs CPU 0 and another (this thread may run on %d CPUs)", was.Count())
	}
	only0.Set(0)
	if err := unix.SchedSetaffinity(0, &only0); err != nil {
		t.Fatal(err)
	}
	defer unix.SchedSetaffinity(0, &was)
	if traced, _ := tracedCPUs(); traced == nil {
		t.Skip("this machine traces every CPU however pinned (nohz_full CPUs, or an affinity or CPU list it cannot read)")
	}
	tr, err := sys.StartTrace(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	lt := tr.(*linuxTrace)
	var read []int
	for _, r := range lt.readers {
		read = append(read, r.CPU)
	}
	untraced := tr.Info().UntracedCPUs
	if !slices.Equal(read, []int{0}) || len(untraced) == 0 || slices.Contains(untraced, 0) {
		t.Errorf("reads CPUs %v, says %v untraced; want 0 read and every other untraced", read, untraced)
	}
	if _, _, err := tr.Stop(); err != nil {
		t.Fatal(err)
	}
}
