package outfile

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// createUnnamed creates an unnamed file in the directory held
// (O_TMPFILE): it has no name until linkTemp gives it one, so a run killed
// before then leaves nothing there. File systems without O_TMPFILE refuse
// it (EOPNOTSUPP, or EISDIR from kernels before 3.11), and the caller
// falls back to a named temporary.
func createUnnamed(dir heldDir) (*os.File, error) {
	fd, err := unix.Openat(dir.fd(), ".", unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, &os.PathError{Op: "openat O_TMPFILE", Path: dir.path(), Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(dir.path(), "(unnamed temporary)")), nil
}

// linkTemp links the unnamed file f into the directory held under a
// temporary name of tickscope's, for the rename into place. linkat with
// AT_EMPTY_PATH links the descriptor itself (it takes
// CAP_DAC_READ_SEARCH, which root has); without it, /proc/self/fd/N
// names it.
func linkTemp(f *os.File, dir heldDir, flag string) (string, error) {
	fd, dirfd := int(f.Fd()), dir.fd()
	for range 100 {
		base := tempPrefix + flag + "-" + strconv.FormatUint(uint64(rand.Uint32()), 10)
		name := filepath.Join(dir.path(), base)
		err := unix.Linkat(fd, "", dirfd, base, unix.AT_EMPTY_PATH)
		if err != nil && !errors.Is(err, unix.EEXIST) {
			err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), dirfd, base, unix.AT_SYMLINK_FOLLOW)
		}
		switch {
		case err == nil:
			return name, nil
		case !errors.Is(err, unix.EEXIST):
			return "", &os.LinkError{Op: "linkat", Old: f.Name(), New: name, Err: err}
		}
	}
	return "", errors.New("no free temporary name in " + dir.path())
}
