//go:build !windows

package hold

import (
	"fmt"
	"runtime"

	"github.com/tickscope/tickscope/internal/seam"
)

// lookupAccountOS: Windows' accounts are looked up on Windows alone.
func lookupAccountOS(string) (sid, problem string, err error) {
	return "", "", fmt.Errorf("Windows accounts on %s: %w", runtime.GOOS, seam.ErrUnsupported)
}
