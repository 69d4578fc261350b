//go:build !unix

package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// heldDir is the output's directory as Open found it. Windows renames by
// name only (no renameat), so Commit checks, just before the rename, that
// the name still leads to the same directory; the directory is not held
// open, which would keep its owner from renaming or removing it.
type heldDir struct {
	dir string
	fi  fs.FileInfo
}

func openDir(dir string) (heldDir, error) {
	testHook("resolved")
	fi, err := os.Stat(dir)
	if err != nil {
		return heldDir{}, err
	}
	return heldDir{dir, fi}, nil
}

func (d heldDir) path() string { return d.dir }

// check fails when the directory's name now leads to another directory
// (through a junction or symlink put in its place) or to nothing.
func (d heldDir) check() error {
	fi, err := os.Stat(d.dir)
	if err != nil || !os.SameFile(d.fi, fi) {
		return fmt.Errorf("the directory %s was replaced during the run; another user may have swapped it to choose where the file goes, so nothing was written", d.dir)
	}
	return nil
}

// createNamed creates a temporary file of tickscope's in the directory.
func (d heldDir) createNamed(flag string) (*os.File, error) {
	return os.CreateTemp(d.dir, tempPrefix+flag+"-*")
}

// tryName creates and removes path when it does not exist yet, so that a
// name the directory cannot hold (a reserved or invalid name on Windows)
// is refused before the measurement instead of at the rename after it.
// O_EXCL guarantees the file removed is the one created here.
func (d heldDir) tryName(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case errors.Is(err, fs.ErrExist):
		return nil // it exists, so its name fits: Target checked its type
	case err != nil:
		return UnwrapPath(err)
	}
	f.Close()
	return os.Remove(path)
}

// mode is the type of what path is now, a symlink not followed.
func (d heldDir) mode(path string) (fs.FileMode, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return 0, err
	}
	return fi.Mode().Type(), nil
}

// owner leaves the temporary file as it was made: on Windows a new file
// takes its ACL from the directory, and the owner of the file replaced is
// not carried over (the Unix rule is dir_unix.go's).
func (d heldDir) owner(string) func(*os.File) error {
	return func(*os.File) error { return nil }
}

func (d heldDir) rename(old, path string) error { return os.Rename(old, path) }

func (d heldDir) remove(name string) { os.Remove(name) }

func (d heldDir) close() {}
