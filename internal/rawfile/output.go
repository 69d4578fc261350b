package rawfile

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tickscope/tickscope/internal/options"
)

// Output is a --raw file. It is opened before anything is measured: its
// temporary file is created in the target directory then, so that a path
// that cannot be written is refused at once, as a usage error, instead of
// after the measurement. Write renames it into place; Close removes it when
// nothing was written. The Output of an empty path writes nothing.
type Output struct {
	path string
	tmp  *os.File
}

// OpenOutput opens the --raw file at path ("" for none).
func OpenOutput(path string) (*Output, error) {
	o := &Output{path: path}
	if path == "" {
		return o, nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, options.BadFlag("raw", path, "cannot write there: it is a directory")
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tickscope-raw-*")
	if err != nil {
		return nil, options.BadFlag("raw", path, "cannot write there: %v", err)
	}
	o.tmp = tmp
	return o, nil
}

// Write stamps f with the tool's name and version and the time, and, when
// there is a path, stores it there atomically: the temporary file is
// written, synced and renamed over the path, so a reader never sees half a
// file and an interrupted write leaves the old one.
func (o *Output) Write(f *File, version string) error {
	f.Tool = Tool{Name: "tickscope", Version: version}
	f.Created = time.Now().UTC()
	if o.tmp == nil {
		return nil
	}
	tmp := o.tmp
	o.tmp = nil
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	if err := writeAndRename(tmp, o.path, f); err != nil {
		return fmt.Errorf("writing %s: %w", o.path, err)
	}
	return nil
}

// Close removes the temporary file if nothing was written.
func (o *Output) Close() {
	if o.tmp != nil {
		o.tmp.Close()
		os.Remove(o.tmp.Name())
		o.tmp = nil
	}
}

// Write stores f at path atomically, as Output.Write does.
func Write(path string, f *File) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tickscope-raw-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	return writeAndRename(tmp, path, f)
}

func writeAndRename(tmp *os.File, path string, f *File) error {
	f.Format, f.Version = FormatName, Version
	if err := f.Validate(); err != nil {
		tmp.Close()
		return fmt.Errorf("refusing to write an invalid raw file: %w", err)
	}
	data, err := json.Marshal(f)
	if err != nil {
		tmp.Close()
		return err
	}
	data = append(data, '\n')
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
