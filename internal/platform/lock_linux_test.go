package platform

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tickscope/tickscope/internal/seam"
)

// testLockDir gives the test a lock directory of its own (RuntimeDirEnv).
func testLockDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	t.Setenv(RuntimeDirEnv, dir)
	return dir
}

// A symbolic link where a lock file goes is refused, and nothing is
// written through it: neither a probe (status, ui, watch) nor a Lock
// truncates the file it points at.
func TestLockRefusesALinkAndWritesNothingThroughIt(t *testing.T) {
	dir := testLockDir(t)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(target, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "holder.lock")); err != nil {
		t.Fatal(err)
	}
	if _, running := (system{}).Holder(); running {
		t.Error("a link is probed as a running holder")
	}
	_, err := (system{}).Lock(seam.HolderLock)
	if err == nil || !strings.Contains(err.Error(), "it is a symbolic link") {
		t.Errorf("Lock through a link: %v, want a refusal naming the link", err)
	}
	if data, _ := os.ReadFile(target); string(data) != "keep me\n" {
		t.Errorf("the link's target now holds %q", data)
	}
}

// The lock directory and its files must be the user's alone: one another
// user made, or could write, is refused with what is wrong.
func TestLockDirMustBeTheUsersAlone(t *testing.T) {
	t.Run("writable by others", func(t *testing.T) {
		dir := testLockDir(t)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		os.Chmod(dir, os.ModeSticky|0o777)
		_, err := (system{}).Lock("bench")
		if err == nil || !strings.Contains(err.Error(), "refusing the lock directory "+dir+": its mode 1777 lets users other than its owner write it") {
			t.Errorf("Lock: %v", err)
		}
	})
	t.Run("a link", func(t *testing.T) {
		dir := testLockDir(t)
		real := t.TempDir()
		if err := os.Symlink(real, dir); err != nil {
			t.Fatal(err)
		}
		_, err := (system{}).Lock("bench")
		if err == nil || !strings.Contains(err.Error(), "refusing the lock directory "+dir+": it is not a directory") {
			t.Errorf("Lock: %v", err)
		}
	})
	t.Run("made by it, 0700", func(t *testing.T) {
		dir := testLockDir(t)
		release, err := (system{}).Lock("bench")
		if err != nil {
			t.Fatal(err)
		}
		release()
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("the directory made: %v %v, want mode 0700", fi.Mode(), err)
		}
	})
	if os.Geteuid() != 0 {
		t.Log("another user's directory and file need root to make: not tested")
		return
	}
	t.Run("another user's directory", func(t *testing.T) {
		dir := testLockDir(t)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		os.Chown(dir, 65534, 65534)
		_, err := (system{}).Lock("bench")
		if err == nil || !strings.Contains(err.Error(), "it belongs to uid 65534, not to uid 0") {
			t.Errorf("Lock: %v", err)
		}
	})
	t.Run("another user's file", func(t *testing.T) {
		dir := testLockDir(t)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "bench.lock")
		os.WriteFile(file, []byte("1\n"), 0o644)
		os.Chown(file, 65534, 65534)
		_, err := (system{}).Lock("bench")
		if err == nil || !strings.Contains(err.Error(), "refusing the lock file "+file+": it belongs to uid 65534") {
			t.Errorf("Lock: %v", err)
		}
	})
	t.Run("a second name for another file", func(t *testing.T) {
		dir := testLockDir(t)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		other := filepath.Join(t.TempDir(), "other")
		os.WriteFile(other, []byte("keep me\n"), 0o644)
		if err := os.Link(other, filepath.Join(dir, "bench.lock")); err != nil {
			t.Skipf("no hard link here: %v", err)
		}
		_, err := (system{}).Lock("bench")
		if err == nil || !strings.Contains(err.Error(), "not a plain file with one name") {
			t.Errorf("Lock: %v", err)
		}
		if data, _ := os.ReadFile(other); string(data) != "keep me\n" {
			t.Errorf("the linked file now holds %q", data)
		}
	})
}

// A record that names a process other than this tickscope's is refused,
// saying why, and the process is not signalled.
func TestEndHolderRefusesAProcessThatIsNotTickscope(t *testing.T) {
	dir := testLockDir(t)
	victim := exec.Command("sleep", "30")
	if err := victim.Start(); err != nil {
		t.Skipf("no sleep to start: %v", err)
	}
	defer victim.Process.Kill()
	release, err := (system{}).Lock(seam.HolderLock)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := os.WriteFile(filepath.Join(dir, "holder.lock"), formatRecord(victim.Process.Pid), 0o644); err != nil {
		t.Fatal(err)
	}
	if pid, running := (system{}).Holder(); !running || pid != victim.Process.Pid {
		t.Fatalf("Holder() = %d, %v; want the forged %d, true", pid, running, victim.Process.Pid)
	}
	err = endHolder()
	want := "not ending process " + strconv.Itoa(victim.Process.Pid) + ", which the holder's record " + filepath.Join(dir, "holder.lock") + " names: it runs "
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "sleep\", not this tickscope") {
		t.Errorf("endHolder: %v, want a refusal starting %q", err, want)
	}
	exited := make(chan error, 1)
	go func() { exited <- victim.Wait() }()
	select {
	case err := <-exited:
		t.Errorf("the process the record named exited: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
}

// A holder that is this tickscope's (the same executable, run by the same
// user) is ended, and endHolder returns once its lock is free. The holder
// is this test binary again, holding the lock in TestHelperHolder.
func TestEndHolderEndsTickscopesHolder(t *testing.T) {
	dir := testLockDir(t)
	holder := exec.Command(os.Args[0], "-test.run=^TestHelperHolder$")
	holder.Env = append(os.Environ(), "TICKSCOPE_TEST_HOLDER=1")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if pid, running := (system{}).Holder(); running && pid == holder.Process.Pid {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the helper holder never held the lock in %s", dir)
		}
	}
	if err := endHolder(); err != nil {
		t.Fatalf("endHolder: %v", err)
	}
	if err := holder.Wait(); err == nil || !strings.Contains(err.Error(), "terminated") {
		t.Errorf("the holder ended with %v, want SIGTERM", err)
	}
	if _, running := (system{}).Holder(); running {
		t.Error("the holder is still seen running")
	}
}

// TestHelperHolder is the holder TestEndHolderEndsTickscopesHolder ends:
// it holds the holder's lock until it is killed.
func TestHelperHolder(t *testing.T) {
	if os.Getenv("TICKSCOPE_TEST_HOLDER") != "1" {
		t.Skip("the holder TestEndHolderEndsTickscopesHolder starts")
	}
	if _, err := (system{}).Lock(seam.HolderLock); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Minute)
}

func TestReadProcessSelf(t *testing.T) {
	p, err := readProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	if p.Exe != self || p.Owner != uidString(os.Geteuid()) {
		t.Errorf("readProcess(self) = %+v, want %s run as %s", p, self, uidString(os.Geteuid()))
	}
}

func TestEffectiveUID(t *testing.T) {
	for _, tt := range []struct {
		status string
		want   int
		err    bool
	}{
		{"Name:\tx\nUid:\t1000\t0\t0\t0\nGid:\t0\t0\t0\t0\n", 0, false},
		{"Uid:\t65534\t65534\t65534\t65534\n", 65534, false},
		{"Name:\tx\n", 0, true},
		{"Uid:\t1000\n", 0, true},
		{"Uid:\t1000\tx\n", 0, true},
	} {
		got, err := effectiveUID(strings.NewReader(tt.status))
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("effectiveUID(%q) = %d, %v; want %d, error %v", tt.status, got, err, tt.want, tt.err)
		}
	}
}

// A Lock whose record cannot be written (a full runtime directory: a tmpfs
// of one page, filled) fails saying the path once and the cause, and
// leaves no lock file behind; a lock file that was there before (a past
// holder's) is kept. Root only: it mounts the tmpfs.
func TestLockOnAFullFileSystemLeavesNothing(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	mnt := t.TempDir()
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=4k,mode=0700"); err != nil {
		t.Skipf("no tmpfs to fill: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	dir := filepath.Join(mnt, "run")
	t.Setenv(RuntimeDirEnv, dir)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	fill, err := os.Create(filepath.Join(mnt, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	for err == nil {
		_, err = fill.Write(make([]byte, 512))
	}
	fill.Close()
	if !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("filling the tmpfs: %v", err)
	}
	path := filepath.Join(dir, seam.BenchLock+".lock")
	release, err := system{}.Lock(seam.BenchLock)
	if err == nil {
		release()
		t.Fatal("Lock took the lock on a full file system")
	}
	if want := "write " + path + ": " + unix.ENOSPC.Error(); err.Error() != want {
		t.Errorf("Lock: %q, want %q", err, want)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the failed Lock left %s (%v)", path, err)
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if release, err := (system{}).Lock(seam.BenchLock); err == nil {
		release()
		t.Fatal("Lock took the lock on a full file system")
	}
	if _, err := os.Lstat(path); err != nil {
		t.Errorf("a failed Lock removed the lock file it did not make: %v", err)
	}
}
