//go:build !unix && !windows

package outfile

import "os"

// lockTemp does nothing here: no sweep looks for a lock.
func lockTemp(*os.File) {}

// sweepStale removes nothing on an OS where tickscope cannot tell whose a
// file is.
func sweepStale(heldDir) {}
