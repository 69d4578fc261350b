//go:build !unix

package outfile

import "os"

// lockTemp does nothing here: Windows does not let a file another process
// holds open be deleted, which is the lock sweepStale would need.
func lockTemp(*os.File) {}

// sweepStale removes nothing here: telling a temporary file left by an
// earlier run of the caller's from another user's takes the owner in the
// file's security descriptor, which this build does not read.
func sweepStale(string) {}
