package seam

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
	"testing"
)

// An OSError whose call names the path does not say it again when its
// cause is package os's error naming the same path; a cause that names
// something else keeps it, and Unwrap gives the cause whole.
func TestOSErrorSaysAPathOnce(t *testing.T) {
	path := "/run/tickscope/bench.lock"
	for _, tt := range []struct {
		name string
		err  *OSError
		want string
	}{
		{"a write of the file it names", &OSError{Call: "write " + path, Err: &fs.PathError{Op: "write", Path: path, Err: syscall.ENOSPC}},
			"write " + path + ": " + syscall.ENOSPC.Error()},
		{"another path", &OSError{Call: "write " + path, Err: &fs.PathError{Op: "open", Path: "/etc/x", Err: syscall.ENOENT}},
			"write " + path + ": open /etc/x: " + syscall.ENOENT.Error()},
		{"a call naming no path", &OSError{Call: "make a directory for the page", Err: &fs.PathError{Op: "mkdirtemp", Path: "/tmp/x-*", Err: syscall.EROFS}},
			"make a directory for the page: mkdirtemp /tmp/x-*: " + syscall.EROFS.Error()},
		{"a link naming both", &OSError{Call: "rename /a to /b", Err: &os.LinkError{Op: "rename", Old: "/a", New: "/b", Err: syscall.EXDEV}},
			"rename /a to /b: " + syscall.EXDEV.Error()},
		{"a link naming one", &OSError{Call: "rename /a", Err: &os.LinkError{Op: "rename", Old: "/a", New: "/b", Err: syscall.EXDEV}},
			"rename /a: rename /a /b: " + syscall.EXDEV.Error()},
		{"a bare status", &OSError{Call: "write " + path, Err: syscall.ENOSPC}, "write " + path + ": " + syscall.ENOSPC.Error()},
	} {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
		if !errors.Is(tt.err, tt.err.Err) {
			t.Errorf("%s: the cause is not unwrapped", tt.name)
		}
	}
}
