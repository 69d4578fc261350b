//go:build !windows

package platform

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/tickscope/tickscope/internal/seam"
)

// The state directory is the lock directory (lock_unix.go): root's
// /run/tickscope, a user's $XDG_RUNTIME_DIR/tickscope or cache directory,
// or RuntimeDirEnv, checked for its owner and mode before use.

func (system) StateDir() (string, error) {
	d, err := thisLockDir()
	if err != nil {
		return "", err
	}
	return d.Path, nil
}

// OpenStateFile opens name relative to the checked directory (openat), so
// that no component of the path can be swapped after the check, with
// O_NOFOLLOW, and never with O_TRUNC: what was opened is checked (a
// regular file of the directory's owner, one name, writable by no one
// else) before it is emptied. O_NONBLOCK keeps a FIFO planted there from
// blocking the open; it is then refused as not a regular file.
func (system) OpenStateFile(name string, how seam.StateOpen) (*os.File, error) {
	d, err := thisLockDir()
	if err != nil {
		return nil, err
	}
	dirfd, err := openLockDir(d, how != seam.StateRead)
	if errors.Is(err, errAbsent) {
		return nil, &fs.PathError{Op: "open", Path: filepath.Join(d.Path, name), Err: fs.ErrNotExist}
	}
	if err != nil {
		return nil, err
	}
	defer unix.Close(dirfd)
	path := filepath.Join(d.Path, name)
	flags := unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NONBLOCK
	switch how {
	case seam.StateRead:
		flags |= unix.O_RDONLY
	case seam.StateReplace:
		flags |= unix.O_WRONLY | unix.O_CREAT
	case seam.StateAppend:
		flags |= unix.O_WRONLY | unix.O_CREAT | unix.O_APPEND
	default:
		return nil, fmt.Errorf("open %s: unknown way %d", path, how)
	}
	fd, err := unix.Openat(dirfd, name, flags, 0o600)
	switch {
	case errors.Is(err, unix.ELOOP):
		return nil, fmt.Errorf("refusing the state file %s: it is a symbolic link; remove it", path)
	case errors.Is(err, unix.ENXIO):
		// A FIFO without a reader, or a socket, opened to write.
		return nil, fmt.Errorf("refusing the state file %s: it is not a plain file with one name; remove it", path)
	case errors.Is(err, unix.ENOENT):
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
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
		return nil, fmt.Errorf("refusing the state file %s: it is not a plain file with one name; remove it", path)
	}
	if err := checkOwned(path, "state file", &st, d.Owner); err != nil {
		f.Close()
		return nil, err
	}
	if how == seam.StateReplace {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, &seam.OSError{Call: "truncate " + path, Err: err}
		}
	}
	return f, nil
}
