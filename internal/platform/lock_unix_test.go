//go:build unix

package platform

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Where a process keeps its locks: never the temporary directory, which
// every user can write.
func TestOwnLockDir(t *testing.T) {
	machine := "/run/tickscope"
	if runtime.GOOS != "linux" {
		machine = "/var/run/tickscope"
	}
	for _, tt := range []struct {
		name                        string
		euid                        int
		override, xdgRuntime, cache string
		want                        lockDir
		err                         string
	}{
		{"root", 0, "", "", "/root/.cache", lockDir{machine, 0, 0o755, ""}, ""},
		{"root with a login session's runtime directory", 0, "", "/run/user/0", "/root/.cache", lockDir{machine, 0, 0o755, ""}, ""},
		{"a user", 1000, "", "/run/user/1000", "/home/u/.cache", lockDir{"/run/user/1000/tickscope", 1000, 0o700, ""}, ""},
		{"a user without a runtime directory", 1000, "", "", "/home/u/.cache", lockDir{"/home/u/.cache/tickscope", 1000, 0o700, ""}, ""},
		{"a relative runtime directory is not one", 1000, "", "run", "/home/u/.cache", lockDir{"/home/u/.cache/tickscope", 1000, 0o700, ""}, ""},
		{"a user with nothing", 1000, "", "", "", lockDir{}, "set XDG_RUNTIME_DIR or HOME"},
		{"the override, as root", 0, "/srv/t/run/", "", "", lockDir{"/srv/t/run", 0, 0o700, RuntimeDirEnv}, ""},
		{"the override, as a user", 1000, "/srv/t/run", "/run/user/1000", "", lockDir{"/srv/t/run", 1000, 0o700, RuntimeDirEnv}, ""},
		{"a relative override", 0, "run", "", "", lockDir{}, "TICKSCOPE_RUNTIME_DIR=run: not an absolute path"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ownLockDir(tt.euid, tt.override, tt.xdgRuntime, tt.cache)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("err = %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("= %+v, %v; want %+v", got, err, tt.want)
			}
			if strings.HasPrefix(got.Path, "/tmp") {
				t.Errorf("%s is in the temporary directory", got.Path)
			}
		})
	}
}

// A directory RuntimeDirEnv names is made, but not its parents: a missing
// parent is refused, naming the variable and the parent, and nothing is
// created.
func TestOverrideLockDirParentsAreNotMade(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "absent")
	d := lockDir{Path: filepath.Join(parent, "run"), Owner: os.Geteuid(), Mode: 0o700, Env: RuntimeDirEnv}
	_, err := openLockDir(d, true)
	want := RuntimeDirEnv + "=" + d.Path + ": its parent directory " + parent + " does not exist"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("openLockDir: %v, want an error starting %q", err, want)
	}
	if _, err := os.Lstat(parent); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s was made: %v", parent, err)
	}
	if err := os.Mkdir(parent, 0o700); err != nil {
		t.Fatal(err)
	}
	fd, err := openLockDir(d, true)
	if err != nil {
		t.Fatalf("openLockDir with its parent made: %v", err)
	}
	unix.Close(fd)
}
