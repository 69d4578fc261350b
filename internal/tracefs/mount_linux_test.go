package tracefs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Close unmounts a tracefs Open mounted; one in use (EBUSY: another
// process holds a file of it) stays mounted, said, not an error.
func TestCloseUnmount(t *testing.T) {
	for _, tc := range []struct {
		name        string
		err         error
		wantErr     bool
		leftMounted bool
	}{
		{"unmounted", nil, false, false},
		{"in use", unix.EBUSY, false, true},
		{"refused", unix.EPERM, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := unmount
			t.Cleanup(func() { unmount = old })
			var called []string
			unmount = func(target string, flags int) error {
				called = append(called, target)
				return tc.err
			}
			in := &Instance{Root: "/sys/kernel/tracing", Mounted: true, readers: map[*CPUReader]bool{}, lockFD: -1}
			err := in.Close()
			if (err != nil) != tc.wantErr {
				t.Errorf("Close: %v, want an error %v", err, tc.wantErr)
			}
			if tc.wantErr && !errors.Is(err, tc.err) {
				t.Errorf("Close: %v, not %v", err, tc.err)
			}
			if len(called) != 1 || called[0] != in.Root {
				t.Errorf("unmounted %q", called)
			}
			if in.LeftMounted != tc.leftMounted {
				t.Errorf("LeftMounted %v, want %v", in.LeftMounted, tc.leftMounted)
			}
		})
	}
}

// A run waiting for the instance holds no file of tracefs open between
// its tries (one held would keep the run it waits on from unmounting the
// tracefs that run mounted), and when the instances directory goes (that
// run unmounted tracefs) it says errUnmounted, so that Open starts again.
// On a directory of the test's own: the flock and the open are what
// lock does to tracefs's.
func TestLockWaitsWithNothingOpen(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "instances")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	holder, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(holder)
	if err := unix.Flock(holder, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	in := &Instance{Root: root, lockFD: -1}
	waiting := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		done <- in.lock(context.Background(), func() {
			select {
			case waiting <- struct{}{}:
			default:
			}
		})
	}()
	<-waiting
	// Waiting, it must come to hold nothing open in dir: this process's
	// only descriptor of it is then the holder's.
	stuck := time.After(10 * time.Second)
	for open := openIn(t, dir); open > 1; open = openIn(t, dir) {
		select {
		case err := <-done:
			t.Fatalf("lock returned %v while the flock was held", err)
		case <-waiting:
		case <-stuck:
			t.Fatalf("lock kept %d descriptors of %s open while it waited", open-1, dir)
		}
	}
	if err := os.Rename(dir, dir+".gone"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, errUnmounted) {
		t.Fatalf("lock, the directory gone: %v, want errUnmounted", err)
	}
}

// openIn counts this process's descriptors of dir (moved or not).
func openIn(t *testing.T, dir string) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if target, _ := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); target == dir {
			n++
		}
	}
	return n
}
