//go:build !unix

package outfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// followLinks resolves the symlinks in path. Windows has no sticky
// directories: who may create a link where is its ACLs' decision (creating
// a symlink takes a privilege ordinary users lack outside Developer Mode), so no rule of owners
// is added here.
func followLinks(path string) (string, error) { return filepath.EvalSymlinks(path) }

// openAppend opens path for appending.
func openAppend(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
}

// trustFile has no rule of owners to apply here (see followLinks).
func trustFile(string, fs.FileInfo) error { return nil }
