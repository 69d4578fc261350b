//go:build unix && !linux

package outfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// openDirNoFollow opens the directory path, free of symlinks as
// followLinks resolved it, without following a link in its last name.
func openDirNoFollow(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}
