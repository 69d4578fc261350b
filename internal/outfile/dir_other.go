//go:build !unix

package outfile

import (
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

func (d heldDir) rename(old, path string) error { return os.Rename(old, path) }

func (d heldDir) remove(name string) { os.Remove(name) }

func (d heldDir) close() {}
