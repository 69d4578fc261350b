package outfile

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tickscope/tickscope/internal/options"
)

// OpenLines opens a log of JSON lines (watch --log) for appending,
// creating it, under the rule of every output file (OpenAppend): only a
// regular file (or a symlink to one that another user could not have
// planted) is written; anything else is a usage error naming the flag. A
// file that ends in a torn line (a crash) gets a newline first, so that
// the torn line stays the only bad one. An empty path opens nothing: nil,
// nil.
func OpenLines(flag, path string) (*os.File, error) {
	if path == "" {
		return nil, nil
	}
	if err := CheckLines(flag, path); err != nil {
		return nil, err
	}
	_, statErr := os.Stat(path)
	f, err := OpenAppend(flag, path)
	if err != nil {
		return nil, err
	}
	if os.IsNotExist(statErr) {
		syncDir(filepath.Dir(path)) // so that a crash does not lose the new file's name
	}
	if info, err := f.Stat(); err == nil && info.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, info.Size()-1); err == nil && last[0] != '\n' {
			if _, err := f.Write([]byte{'\n'}); err != nil {
				f.Close()
				return nil, fmt.Errorf("writing %s: %w", path, err)
			}
		}
	}
	return f, nil
}

// CheckLines refuses a log path (OpenLines) that is not a regular file
// (or a symlink to one, or missing), as a usage error naming the flag,
// without opening it. An empty path is no log.
func CheckLines(flag, path string) error {
	if path == "" {
		return nil
	}
	if _, err := Target(path); err != nil {
		return options.BadFlag(flag, path, "%v", err)
	}
	return nil
}

// syncDir syncs a directory's entries where the OS can (not Windows, whose
// directories cannot be opened for it); a failure leaves only the new
// file's name at risk in a crash, so it is not reported.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
