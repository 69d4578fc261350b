package platform

import (
	"errors"

	"golang.org/x/sys/windows"
)

// NoStream tells whether a write to a standard stream failed because the
// process has no such stream: its handle is not one ("GetStdHandle
// function", Microsoft Learn: a process started without redirection by a
// program that gave it none, as the shell's runas verb may under Wine, has
// a standard handle that names nothing). Such output goes nowhere by how
// the process was started; it is not a write that failed.
func NoStream(err error) bool { return errors.Is(err, windows.ERROR_INVALID_HANDLE) }
