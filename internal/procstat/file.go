package procstat

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
)

// MaxFileBytes is the longest file read: /proc/interrupts of a machine with
// thousands of CPUs and hundreds of lines is some megabytes.
const MaxFileBytes = 64 << 20

// ParseError says why a file could not be read, and where.
type ParseError struct {
	File   string
	Line   int // 1-based; 0 for the whole file
	Reason string
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("procstat: %s: %s", e.File, e.Reason)
	}
	return fmt.Sprintf("procstat: %s line %d: %s", e.File, e.Line, e.Reason)
}

// readFile reads a file of fsys of at most MaxFileBytes.
func readFile(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileBytes {
		return nil, &ParseError{File: name, Reason: fmt.Sprintf("longer than %d bytes", MaxFileBytes)}
	}
	return b, nil
}

// isNotExist reports whether err says a file is absent.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// delta32 is after-before of a counter the kernel keeps as unsigned int:
// one that went backwards wrapped once.
func delta32(before, after uint64) uint64 {
	if after >= before {
		return after - before
	}
	if before <= 0xffffffff && after <= 0xffffffff {
		return after + (1 << 32) - before
	}
	return after
}
