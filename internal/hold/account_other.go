//go:build !windows

package hold

import (
	"fmt"
	"runtime"

	"github.com/tickscope/tickscope/internal/seam"
)

// lookupAccountOS: Windows' accounts are looked up on Windows alone.
func lookupAccountOS(string) (sid, problem string, err error) {
	return "", "", fmt.Errorf("looking up a Windows account on %s: %w", runtime.GOOS, seam.ErrUnsupported)
}
