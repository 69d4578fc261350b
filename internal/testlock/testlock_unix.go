//go:build unix

package testlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// lock is Lock: a flock(2) on a file named for the lock, which the kernel
// drops if the test process dies. The lock file is in a directory only the
// user can write (lockDir), opened without following a link: tests run as
// root, and another user must be able neither to hold their lock nor to
// point it at a file.
func lock(name string) (release func(), err error) {
	dir, err := lockDir()
	if err != nil {
		return nil, err
	}
	dirfd, err := openDir(dir)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dirfd)
	path := filepath.Join(dir, name+".lock")
	fd, err := unix.Openat(dirfd, name+".lock", unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the test lock %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		f.Close()
		return nil, fmt.Errorf("refusing the test lock %s: not a regular file (%v)", path, err)
	}
	for {
		err = unix.Flock(fd, unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// lockDir is where the test locks of this user live: root's
// /run/tickscope-test (/var/run elsewhere than Linux); a user's
// $XDG_RUNTIME_DIR/tickscope-test, or, without it, tickscope-test in the
// user's cache directory. Never the temporary directory, where another
// user could make the file first.
func lockDir() (string, error) {
	if os.Geteuid() == 0 {
		if runtime.GOOS == "linux" {
			return "/run/tickscope-test", nil
		}
		return "/var/run/tickscope-test", nil
	}
	if xdg := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(xdg) {
		return filepath.Join(xdg, "tickscope-test"), nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no directory of yours for the test locks: %w", err)
	}
	return filepath.Join(cache, "tickscope-test"), nil
}

// openDir makes dir (mode 0700) when absent and opens it without
// following a link, then checks what it opened: a directory of this
// user's that no one else can write.
func openDir(dir string) (int, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return -1, err
	}
	if err := unix.Mkdir(dir, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return -1, fmt.Errorf("create the test lock directory %s: %w", dir, err)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open the test lock directory %s (a link?): %w", dir, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if int(st.Uid) != os.Geteuid() || st.Mode&0o022 != 0 {
		unix.Close(fd)
		return -1, fmt.Errorf("refusing the test lock directory %s: owned by uid %d with mode %04o; it must be yours and writable by you alone", dir, st.Uid, st.Mode&0o7777)
	}
	return fd, nil
}
