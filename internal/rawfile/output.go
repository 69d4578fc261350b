package rawfile

import (
	"fmt"
	"time"

	"github.com/tickscope/tickscope/internal/options"
)

// CheckOutput refuses a --raw path that cannot be written, as a usage
// error, before anything is measured. An empty path asks for no file.
func CheckOutput(path string) error {
	if path == "" {
		return nil
	}
	if err := CheckWritable(path); err != nil {
		return options.BadFlag("raw", path, "cannot write there: %v", err)
	}
	return nil
}

// WriteOutput stamps f with the tool's name and version and the time, and
// writes it to a --raw path, when there is one.
func WriteOutput(path string, f *File, version string) error {
	f.Tool = Tool{Name: "tickscope", Version: version}
	f.Created = time.Now().UTC()
	if path == "" {
		return nil
	}
	if err := Write(path, f); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
