//go:build !unix

package rawfile

import "os"

// openNonBlocking opens path for reading: outside Unix, opening a named
// pipe or device by a path that Stat called a regular file cannot block.
func openNonBlocking(path string) (*os.File, error) { return os.Open(path) }
