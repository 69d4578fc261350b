//go:build !windows

package precise

import "time"

// hold requests nothing: only Windows has a process-wide timer period.
func hold(time.Duration) (func() error, error) {
	return func() error { return nil }, nil
}
