//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !windows

package escape

import "errors"

// keysOneByOne is not supported here: ESC does nothing, Ctrl+C still stops.
func keysOneByOne(int) (func(), error) { return nil, errors.New("not supported on this OS") }
