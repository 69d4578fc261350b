//go:build !windows

package precise_test

import "time"

var hrBase = time.Now()

// hrNow reads the high-resolution clock the tests measure with.
func hrNow() time.Duration { return time.Since(hrBase) }
