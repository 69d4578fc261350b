package outfile

import (
	"io"
	"time"

	"github.com/tickscope/tickscope/internal/rawfile"
)

// Raw is a --raw file. It is opened before anything is measured, under
// the rule every output file follows: an existing path that is not a
// regular file is refused, and the temporary file is created in the target
// directory then, so that a path that cannot be written is a usage error at
// once instead of a failure after the measurement. Write renames it into
// place; Close removes it when nothing was written. The Raw of an empty
// path writes nothing.
type Raw struct {
	out *File
	lim rawfile.Limits
}

// OpenRaw opens the --raw file at path ("" for none), which Write holds
// to lim.
func OpenRaw(path string, lim rawfile.Limits) (*Raw, error) {
	out, err := Open("raw", path)
	if err != nil {
		return nil, err
	}
	return &Raw{out: out, lim: lim}, nil
}

// Write stamps f with the tool's name and version and the time, and, when
// there is a path, stores it there atomically: the temporary file is
// written, synced and renamed over the path, so a reader never sees half a
// file and an interrupted write leaves the old one.
func (r *Raw) Write(f *rawfile.File, version string) error {
	f.Tool = rawfile.Tool{Name: rawfile.ToolName, Version: version}
	f.Created = time.Now().UTC()
	return r.out.Commit(func(w io.Writer) error { return rawfile.Encode(w, f, r.lim) })
}

// Close removes the temporary file if nothing was written.
func (r *Raw) Close() { r.out.Close() }
