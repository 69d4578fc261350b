//go:build unix

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

// OpenStateFile opens name in the checked directory through
// openOwnedFile (relative to it, O_NOFOLLOW, a regular file of the
// directory's owner with one name, writable by no one else), and never
// with O_TRUNC: what was opened is checked before it is emptied.
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
	var flags int
	switch how {
	case seam.StateRead:
		flags = unix.O_RDONLY
	case seam.StateReplace:
		flags = unix.O_WRONLY | unix.O_CREAT
	case seam.StateAppend:
		flags = unix.O_WRONLY | unix.O_CREAT | unix.O_APPEND
	default:
		return nil, fmt.Errorf("open %s: unknown way %d", path, how)
	}
	f, err := openOwnedFile(dirfd, d, name, "state file", flags, 0o600)
	if errors.Is(err, errAbsent) {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	if err != nil {
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
