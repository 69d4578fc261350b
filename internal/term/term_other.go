//go:build !unix && !windows

package term

import "errors"

// keysOneByOne is not supported here: ESC does nothing, Ctrl+C still stops.
func keysOneByOne(int) (func(), error) { return nil, errors.New("not supported on this OS") }
