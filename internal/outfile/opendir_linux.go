package outfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// openDirNoFollow opens the directory path, free of symlinks as
// followLinks resolved it, one name at a time from "/" (or the working
// directory), each opened relative to the one before with O_NOFOLLOW: a
// symlink put in place of any directory on the way since it was resolved
// is refused, not followed, whatever fs.protected_symlinks says. The
// directories on the way are opened O_PATH, which needs no permission to
// read them (as a path needs only search permission); the last is opened
// to be read.
func openDirNoFollow(path string) (*os.File, error) {
	const walk = unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	start, done := ".", "."
	if filepath.IsAbs(path) {
		start, done = "/", "/"
	}
	fd, err := unix.Open(start, walk, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: start, Err: err}
	}
	for _, name := range strings.Split(path, "/") {
		if name == "" || name == "." {
			continue
		}
		done = filepath.Join(done, name)
		next, err := unix.Openat(fd, name, walk, 0)
		unix.Close(fd)
		if err != nil {
			if errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
				if fi, lerr := os.Lstat(done); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
					return nil, fmt.Errorf("%s became a symlink after its links were checked; another user may have swapped it to choose where the file goes, so it is not followed", done)
				}
			}
			return nil, &os.PathError{Op: "open", Path: done, Err: err}
		}
		fd = next
	}
	dir, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	unix.Close(fd)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(dir), path), nil
}
