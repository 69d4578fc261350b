package platform_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/platform"
	"github.com/tickscope/tickscope/internal/seam"
)

// The error host_other.go gives on the OSes tickscope does not serve,
// checked on every OS: its text is what every command prints there.
func TestUnsupportedError(t *testing.T) {
	for _, tc := range []struct{ goos, goarch, want string }{
		{"freebsd", "amd64", "not supported on freebsd/amd64"},
		{"openbsd", "arm64", "not supported on openbsd/arm64"},
		{"plan9", "386", "not supported on plan9/386"},
	} {
		err := error(&platform.UnsupportedError{GOOS: tc.goos, GOARCH: tc.goarch})
		if got := err.Error(); got != tc.want {
			t.Errorf("%s/%s: %q, want %q", tc.goos, tc.goarch, got, tc.want)
		}
		if !errors.Is(err, seam.ErrUnsupported) {
			t.Errorf("%s/%s: errors.Is(err, seam.ErrUnsupported) is false", tc.goos, tc.goarch)
		}
	}
}

// Supported is nil exactly on the OSes tickscope serves.
func TestSupportedHere(t *testing.T) {
	err := platform.Supported()
	switch runtime.GOOS {
	case "linux", "windows", "darwin":
		if err != nil {
			t.Errorf("Supported() = %v on %s", err, runtime.GOOS)
		}
	default:
		if err == nil || !strings.Contains(err.Error(), runtime.GOOS+"/"+runtime.GOARCH) {
			t.Errorf("Supported() = %v on %s/%s", err, runtime.GOOS, runtime.GOARCH)
		}
	}
}
