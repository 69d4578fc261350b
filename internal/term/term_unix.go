//go:build unix

package term

import "golang.org/x/sys/unix"

// keysOneByOne turns off line buffering and echo (ICANON, ECHO) and nothing
// else: ISIG keeps Ctrl+C a signal, OPOST keeps newlines as they were.
func keysOneByOne(fd int) (undo func(), err error) {
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil, err
	}
	raw := *old
	raw.Lflag &^= unix.ICANON | unix.ECHO
	raw.Cc[unix.VMIN] = 1
	raw.Cc[unix.VTIME] = 0
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &raw); err != nil {
		return nil, err
	}
	return func() { unix.IoctlSetTermios(fd, ioctlSetTermios, old) }, nil
}
