package outfile_test

import "golang.org/x/sys/unix"

// mknod makes a character device node (Linux: only the test on Linux makes one).
func mknod(path string, major, minor uint32) error {
	return unix.Mknod(path, unix.S_IFCHR|0o666, int(unix.Mkdev(major, minor)))
}
