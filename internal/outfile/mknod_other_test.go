//go:build unix && !linux

package outfile_test

import "errors"

// mknod is tried only on Linux, whose device numbers the test knows.
func mknod(string, uint32, uint32) error { return errors.New("not tried on this OS") }
