//go:build !windows

package platform

// NoStream is false: on Unix a closed standard stream (EBADF) is a write
// that failed, as the shell's utilities report it.
func NoStream(error) bool { return false }
