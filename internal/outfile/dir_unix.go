//go:build unix

package outfile

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/tickscope/tickscope/internal/options"
)

// heldDir is the output's directory, held open from Open to Commit: the
// temporary file is linked and renamed relative to the descriptor, not by
// the directory's name, so that whoever owns a directory on the way and
// swaps it for a symlink during the run cannot choose where the file goes.
type heldDir struct{ f *os.File }

// openDir opens dir, its symlinks resolved under the protected_symlinks
// rule, without following a link in its last name.
func openDir(dir string) (heldDir, error) {
	resolved, err := followLinks(dir)
	if err != nil {
		return heldDir{}, err
	}
	f, err := openDirNoFollow(resolved)
	return heldDir{f}, err
}

func openDirNoFollow(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

func (d heldDir) path() string { return d.f.Name() }

// check fails when the directory's name no longer names the directory
// held: it was renamed away and something else, a symlink to another
// directory say, put in its place. The file is then written nowhere.
func (d heldDir) check() error {
	held, err := d.f.Stat()
	if err != nil {
		return err
	}
	now, err := openDirNoFollow(d.path())
	if err != nil {
		what := "gone"
		if fi, lerr := os.Lstat(d.path()); lerr == nil {
			what = options.FileKind(fi.Mode())
		}
		return fmt.Errorf("the directory %s was replaced during the run (it is now %s); another user may have swapped it to choose where the file goes, so nothing was written", d.path(), what)
	}
	defer now.Close()
	fi, err := now.Stat()
	if err != nil {
		return err
	}
	if !os.SameFile(held, fi) {
		return fmt.Errorf("the directory %s was replaced during the run by another directory; another user may have swapped it to choose where the file goes, so nothing was written", d.path())
	}
	return nil
}

// rename renames the file named old in the directory over the name of
// path, both relative to the directory held.
func (d heldDir) rename(old, path string) error {
	if err := unix.Renameat(int(d.f.Fd()), filepath.Base(old), int(d.f.Fd()), filepath.Base(path)); err != nil {
		return &os.LinkError{Op: "renameat", Old: old, New: path, Err: err}
	}
	return nil
}

// remove removes the file named name from the directory held.
func (d heldDir) remove(name string) {
	unix.Unlinkat(int(d.f.Fd()), filepath.Base(name), 0)
}

func (d heldDir) close() {
	if d.f != nil {
		d.f.Close()
	}
}
