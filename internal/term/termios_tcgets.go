//go:build unix && !(darwin || dragonfly || freebsd || netbsd || openbsd)

package term

import "golang.org/x/sys/unix"

const (
	ioctlGetTermios = unix.TCGETS
	ioctlSetTermios = unix.TCSETS
)
