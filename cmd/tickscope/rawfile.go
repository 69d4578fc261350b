package main

import (
	"fmt"
	"time"

	"github.com/tickscope/tickscope/internal/rawfile"
)

// newRawFile stamps a raw-samples document with this build and the time.
func newRawFile(f rawfile.File) *rawfile.File {
	f.Tool = rawfile.Tool{Name: "tickscope", Version: toolVersion()}
	f.Created = time.Now().UTC()
	return &f
}

// writeRaw writes file to path, when --raw gave one.
func writeRaw(path string, file *rawfile.File) error {
	if path == "" {
		return nil
	}
	if err := rawfile.Write(path, file); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// rawfileCheck refuses an unwritable --raw before anything is measured.
func rawfileCheck(path string) error {
	if path == "" {
		return nil
	}
	if err := rawfile.CheckWritable(path); err != nil {
		return badFlag("raw", path, "cannot write there: %v", err)
	}
	return nil
}
