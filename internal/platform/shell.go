package platform

import "github.com/tickscope/tickscope/internal/seam"

// NewShell returns the desktop shell of the OS tickscope runs on: its
// default browser, and on Windows the UAC prompt (shell_*.go).
func NewShell() seam.Shell { return shell{} }

// shell is this OS's seam.Shell.
type shell struct{}

var _ seam.Shell = shell{}
