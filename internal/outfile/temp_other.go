//go:build !linux

package outfile

import (
	"errors"
	"os"
)

var errNoUnnamed = errors.New("unnamed files (O_TMPFILE) are Linux's")

// createUnnamed is Linux's alone: elsewhere the temporary file is named.
func createUnnamed(heldDir) (*os.File, error) { return nil, errNoUnnamed }

// linkTemp is never reached: no file is unnamed here.
func linkTemp(*os.File, heldDir, string) (string, error) { return "", errNoUnnamed }
