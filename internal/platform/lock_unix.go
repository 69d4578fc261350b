//go:build unix

package platform

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/tickscope/tickscope/internal/seam"
)

// machineLockDir is root's: /run is the runtime directory of the system
// (the FHS), and a startup holder started by systemd has no other.
func machineLockDir() lockDir {
	if runtime.GOOS == "linux" {
		return lockDir{Path: "/run/tickscope", Owner: 0, Mode: 0o755}
	}
	return lockDir{Path: "/var/run/tickscope", Owner: 0, Mode: 0o755}
}

// lockDir is a directory of lock files and the user who must own it.
// Owner alone may write there: a directory another user can write is
// refused, whatever its mode says otherwise. Root's is readable by every
// user (Mode 0755), so that a user's status, ui and watch can tell whether
// root's startup holder runs; a user's own is 0700. Env is the
// environment variable that named Path, when one did: only the directory
// itself is then made, never a parent.
type lockDir struct {
	Path  string
	Owner int
	Mode  os.FileMode
	Env   string
}

// ownLockDir is where a process running as euid keeps its locks, from its
// environment: RuntimeDirEnv when set; root's machineLockDir; a user's
// $XDG_RUNTIME_DIR/tickscope (the XDG Base Directory specification's
// directory for "user-specific runtime files", owned by the user, mode
// 0700, on a local file system); without it, the user's cache directory
// (cacheDir: $XDG_CACHE_HOME or ~/.cache), which only the user can write
// either and is on the user's own file system; a lock there outlives a
// reboot as a file only, and a record counts only while its lock is held.
func ownLockDir(euid int, override, xdgRuntime, cacheDir string) (lockDir, error) {
	private := func(path string) lockDir { return lockDir{Path: path, Owner: euid, Mode: 0o700} }
	switch {
	case override != "":
		if !filepath.IsAbs(override) {
			return lockDir{}, fmt.Errorf("%s=%s: not an absolute path", RuntimeDirEnv, override)
		}
		d := private(filepath.Clean(override))
		d.Env = RuntimeDirEnv
		return d, nil
	case euid == 0:
		return machineLockDir(), nil
	case filepath.IsAbs(xdgRuntime):
		return private(filepath.Join(xdgRuntime, "tickscope")), nil
	case filepath.IsAbs(cacheDir):
		return private(filepath.Join(cacheDir, "tickscope")), nil
	}
	return lockDir{}, errors.New("no directory of yours to keep tickscope's locks in: set XDG_RUNTIME_DIR or HOME")
}

// thisLockDir is ownLockDir for this process.
func thisLockDir() (lockDir, error) {
	cache, _ := os.UserCacheDir()
	return ownLockDir(os.Geteuid(), os.Getenv(RuntimeDirEnv), os.Getenv("XDG_RUNTIME_DIR"), cache)
}

// errAbsent is a lock directory or file that does not exist (yet):
// nothing holds a lock there.
var errAbsent = errors.New("no lock there")

// openLockDir opens d, creating it first when create is set (its parent
// too, for a cache directory not made yet, but not for a directory an
// environment variable named: the parents of a path a user typed are not
// made, following whatever links they hold), and checks what it opened, not
// what the path named a moment before: a directory, not a symbolic link,
// owned by d.Owner, writable by no one else. Files are then opened
// relative to it (openat), so that no component of its path can be
// swapped in between. Without create, a directory that does not exist
// gives errAbsent.
func openLockDir(d lockDir, create bool) (dirfd int, err error) {
	if create {
		err := unix.Mkdir(d.Path, uint32(d.Mode))
		if errors.Is(err, unix.ENOENT) && d.Env != "" {
			return -1, fmt.Errorf("%s=%s: its parent directory %s does not exist; create it, or name a directory whose parent exists", d.Env, d.Path, filepath.Dir(d.Path))
		}
		if errors.Is(err, unix.ENOENT) {
			if err := os.MkdirAll(filepath.Dir(d.Path), 0o700); err != nil {
				return -1, &seam.OSError{Call: "create the lock directory's parent " + filepath.Dir(d.Path), Err: err}
			}
			err = unix.Mkdir(d.Path, uint32(d.Mode))
		}
		if err == nil {
			// The umask may have taken bits the mode gives on purpose.
			unix.Chmod(d.Path, uint32(d.Mode))
		} else if !errors.Is(err, unix.EEXIST) {
			return -1, &seam.OSError{Call: "create the lock directory " + d.Path, Err: err}
		}
	}
	fd, err := unix.Open(d.Path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ENOENT) && !create:
		return -1, errAbsent
	case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR):
		return -1, fmt.Errorf("refusing the lock directory %s: it is not a directory (a symbolic link?); remove it", d.Path)
	case err != nil:
		return -1, &seam.OSError{Call: "open the lock directory " + d.Path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, &seam.OSError{Call: "stat the lock directory " + d.Path, Err: err}
	}
	if err := checkOwned(d.Path, "lock directory", &st, d.Owner); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// checkOwned refuses a directory or file (what: "lock directory", "lock
// file", ...) that owner does not own or that another user could write.
func checkOwned(path, what string, st *unix.Stat_t, owner int) error {
	mode := os.FileMode(st.Mode & 0o7777)
	switch {
	case int(st.Uid) != owner:
		return fmt.Errorf("refusing the %s %s: it belongs to uid %d, not to uid %d, so another user may have made it; remove it", what, path, st.Uid, owner)
	case mode&0o022 != 0:
		return fmt.Errorf("refusing the %s %s: its mode %04o lets users other than its owner write it; remove it", what, path, mode)
	}
	return nil
}

// Lock takes the lock name in this process's lock directory: its file's
// lock, taken without waiting (tryLock: an open file description lock on
// Linux, flock elsewhere), which the kernel drops when its holder exits
// however it exits; the file then records this process's id. A Lock that
// fails after making the file (its record could not be written: a full
// file system) removes it while still holding its lock, so that a failure
// leaves nothing behind; a lock is therefore taken only on the file the
// name still gives once it is held (lockNamed), never on one removed
// meanwhile.
func (system) Lock(name string) (release func(), err error) {
	d, err := thisLockDir()
	if err != nil {
		return nil, err
	}
	dirfd, err := openLockDir(d, true)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dirfd)
	f, made, err := lockNamed(dirfd, d, name)
	if err != nil {
		return nil, err
	}
	if err := writeRecord(f); err != nil {
		if made {
			unix.Unlinkat(dirfd, name+".lock", 0)
		}
		f.Close()
		return nil, err
	}
	return func() {
		// Emptied while still locked: a record counts only while its lock
		// is held, and the next holder writes its own.
		f.Truncate(0)
		f.Close()
	}, nil
}

// lockNamed opens (or makes: made) the lock file name in dirfd and takes
// its lock, then checks that the name still gives the file locked: a Lock
// that failed may have removed it in between, and a lock on a file no name
// gives would be held beside the next one's. It tries again then, a few
// times.
func lockNamed(dirfd int, d lockDir, name string) (f *os.File, made bool, err error) {
	for range 3 {
		f, made, err = makeRecord(dirfd, d, name)
		if err != nil {
			return nil, false, err
		}
		switch busy, err := tryLock(f); {
		case busy:
			defer f.Close()
			return nil, false, &seam.LockedError{What: name, PID: readRecordFile(f)}
		case err != nil:
			f.Close()
			return nil, false, err
		}
		var held, named unix.Stat_t
		if unix.Fstat(int(f.Fd()), &held) == nil && unix.Fstatat(dirfd, name+".lock", &named, unix.AT_SYMLINK_NOFOLLOW) == nil &&
			held.Dev == named.Dev && held.Ino == named.Ino {
			return f, made, nil
		}
		f.Close()
	}
	return nil, false, fmt.Errorf("the lock file %s was removed each time it was locked; try again", filepath.Join(d.Path, name+".lock"))
}

// makeRecord opens the lock file name in dirfd to write, as openRecord
// does, making it when absent (made) with O_EXCL, so that Lock knows
// whether a failure must remove it.
func makeRecord(dirfd int, d lockDir, name string) (f *os.File, made bool, err error) {
	f, err = openOwnedFile(dirfd, d, name+".lock", "lock file", unix.O_RDWR|unix.O_CREAT|unix.O_EXCL, 0o644)
	if err == nil {
		return f, true, nil
	}
	if !errors.Is(err, unix.EEXIST) {
		if errors.Is(err, errAbsent) {
			err = &seam.OSError{Call: "open " + filepath.Join(d.Path, name+".lock"), Err: unix.ENOENT}
		}
		return nil, false, err
	}
	f, err = openRecord(dirfd, d, name, true)
	return f, false, err
}

// openRecord opens the lock file name in the lock directory dirfd (at d)
// without truncating it, creating it (mode 0644: readable by the users
// who may probe) when create is set, through openOwnedFile. Without
// create, a file that does not exist gives errAbsent.
func openRecord(dirfd int, d lockDir, name string, create bool) (*os.File, error) {
	flags := unix.O_RDONLY
	if create {
		flags = unix.O_RDWR | unix.O_CREAT
	}
	f, err := openOwnedFile(dirfd, d, name+".lock", "lock file", flags, 0o644)
	if errors.Is(err, errAbsent) && create {
		return nil, &seam.OSError{Call: "open " + filepath.Join(d.Path, name+".lock"), Err: unix.ENOENT}
	}
	return f, err
}

// openOwnedFile opens name in the checked directory dirfd (at d) with
// flags, relative to it (openat), so that no component of the path can be
// swapped after the directory's check, with O_NOFOLLOW, and checks what
// it opened: a regular file of d's owner with one name, writable by no one
// else (what names it in a refusal: "lock file", "state file").
// O_NONBLOCK keeps a FIFO planted there from blocking the open; it is then
// refused as not a regular file. Callers never pass O_TRUNC: a file is
// emptied only once checked. A file that does not exist gives errAbsent.
func openOwnedFile(dirfd int, d lockDir, name, what string, flags int, perm uint32) (*os.File, error) {
	path := filepath.Join(d.Path, name)
	fd, err := unix.Openat(dirfd, name, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, perm)
	switch {
	case errors.Is(err, unix.ELOOP):
		return nil, fmt.Errorf("refusing the %s %s: it is a symbolic link; remove it", what, path)
	case errors.Is(err, unix.ENXIO):
		// A FIFO without a reader, or a socket, opened to write.
		return nil, fmt.Errorf("refusing the %s %s: it is not a plain file with one name; remove it", what, path)
	case errors.Is(err, unix.ENOENT):
		return nil, errAbsent
	case err != nil:
		return nil, &seam.OSError{Call: "open " + path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, &seam.OSError{Call: "stat " + path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink != 1 {
		f.Close()
		return nil, fmt.Errorf("refusing the %s %s: it is not a plain file with one name; remove it", what, path)
	}
	if err := checkOwned(path, what, &st, d.Owner); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// readRecordFile reads the process id f's record names, or 0.
func readRecordFile(f *os.File) int {
	buf := make([]byte, 16)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0
	}
	return parseRecord(buf[:n])
}

// writeRecord replaces f's record with this process's id; f's lock is
// held.
func writeRecord(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return &seam.OSError{Call: "truncate " + f.Name(), Err: err}
	}
	if _, err := f.WriteAt(formatRecord(os.Getpid()), 0); err != nil {
		return &seam.OSError{Call: "write " + f.Name(), Err: err}
	}
	return nil
}
