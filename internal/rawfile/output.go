package rawfile

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/tickscope/tickscope/internal/outfile"
)

// Output is a --raw file. It is opened before anything is measured, under
// the rule every output file follows (package outfile): an existing path
// that is not a regular file is refused, and the temporary file is created
// in the target directory then, so that a path that cannot be written is a
// usage error at once instead of a failure after the measurement. Write
// renames it into place; Close removes it when nothing was written. The
// Output of an empty path writes nothing.
type Output struct {
	out *outfile.File
}

// OpenOutput opens the --raw file at path ("" for none).
func OpenOutput(path string) (*Output, error) {
	out, err := outfile.Open("raw", path)
	if err != nil {
		return nil, err
	}
	return &Output{out: out}, nil
}

// Write stamps f with the tool's name and version and the time, and, when
// there is a path, stores it there atomically: the temporary file is
// written, synced and renamed over the path, so a reader never sees half a
// file and an interrupted write leaves the old one.
func (o *Output) Write(f *File, version string) error {
	f.Tool = Tool{Name: ToolName, Version: version}
	f.Created = time.Now().UTC()
	return o.out.Commit(func(w io.Writer) error { return encode(w, f) })
}

// Close removes the temporary file if nothing was written.
func (o *Output) Close() { o.out.Close() }

// Write stores f at path atomically, as Output.Write does, under the same
// output-file rule, without stamping it.
func Write(path string, f *File) error {
	out, err := outfile.Open("raw", path)
	if err != nil {
		return err
	}
	defer out.Close()
	return out.Commit(func(w io.Writer) error { return encode(w, f) })
}

// encode validates f and writes it as one line of compact JSON: the size
// limits the reader enforces (MaxFileBytes) assume this encoding.
func encode(w io.Writer, f *File) error {
	f.Format, f.Version = FormatName, Version
	f.printableStrings()
	if err := f.Validate(); err != nil {
		return fmt.Errorf("refusing to write an invalid raw file: %w", err)
	}
	data, err := json.Marshal(f)
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}
