//go:build unix

package httpserver

import (
	"errors"
	"syscall"
)

// descriptorLimit is the process's soft RLIMIT_NOFILE (0: unknown or
// unlimited). Go raises the soft limit to the hard one at start, so this
// is what the process can open.
func descriptorLimit() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	// RLIM_INFINITY is the largest value of Cur's type (uint64 or int64).
	if cur := uint64(rl.Cur); cur < 1<<62 {
		return cur
	}
	return 0
}

// outOfDescriptors is whether an Accept failed for want of a descriptor.
func outOfDescriptors(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}
