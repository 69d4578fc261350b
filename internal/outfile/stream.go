package outfile

import (
	"fmt"
	"io/fs"
	"os"
	"runtime"

	"github.com/tickscope/tickscope/internal/options"
)

// StreamError says that an output path is one of this run's own standard
// streams: /dev/stdout, /dev/fd/2, /proc/self/fd/1, or any other name of
// the file, pipe or terminal standard output or standard error is. Every
// command prints its report on standard output and its progress and
// warnings on standard error, so an output file written through the stream
// would be mixed with them (a raw file followed by a text report is no raw
// file), and one renamed into its place would replace the file the shell
// opened (`>> all-runs.log` replaced, its earlier lines gone, the report
// written to the unlinked old file). Such a path is refused before
// anything is measured.
type StreamError struct {
	// Stream is "standard output" or "standard error", What what it is
	// ("a pipe", "a regular file", ...).
	Stream, What string
}

func (e *StreamError) Error() string {
	return fmt.Sprintf("it is this run's %s (%s), where tickscope prints; an output file is neither written through it nor put in its place: give a file of its own", e.Stream, e.What)
}

// ownStream is the StreamError of path when it is the same file as this
// process's standard output or standard error (device and inode on Unix,
// volume and file index on Windows: sameStream), nil otherwise. The file
// itself is compared, not the path's text, so that every name of the
// stream is caught, a link to it as surely as /dev/stdout.
func ownStream(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return nil // a missing path is no stream; the rest is Target's to say
	}
	for _, s := range []struct {
		f    *os.File
		name string
	}{{os.Stdout, "standard output"}, {os.Stderr, "standard error"}} {
		if s.f == nil {
			continue
		}
		si, err := s.f.Stat()
		if err != nil {
			continue // a closed stream is nothing a path can name
		}
		if sameStream(fi, si, runtime.GOOS == "windows") {
			return &StreamError{Stream: s.name, What: streamKind(si.Mode())}
		}
	}
	return nil
}

// sameStream reports whether fi, the file a path names, is si, a standard
// stream's (os.SameFile). With regularOnly (Windows) only two regular
// files are compared: Windows gives a pipe or a console no identity
// (File.Stat leaves its volume and file index 0, and os.Stat("NUL") is
// all zeros too), so that any two of them would be the same file and
// `--raw NUL` this run's standard output whenever that is a console or a
// pipe. Such a path is no regular file, and Target refuses it as what it
// is. Unix gives pipes and terminals a device and inode of their own,
// which are compared: /dev/stdout on a pipe is the pipe.
func sameStream(fi, si fs.FileInfo, regularOnly bool) bool {
	if regularOnly && (!fi.Mode().IsRegular() || !si.Mode().IsRegular()) {
		return false
	}
	return os.SameFile(fi, si)
}

// streamKind names what a standard stream is: FileKind's words, with a
// FIFO called a pipe (what a shell's | makes).
func streamKind(m os.FileMode) string {
	if m&os.ModeNamedPipe != 0 {
		return "a pipe"
	}
	return options.FileKind(m)
}
