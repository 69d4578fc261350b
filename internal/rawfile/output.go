package rawfile

import (
	"encoding/json"
	"fmt"
	"io"
)

// Encode validates f within lim and writes it as one line of compact JSON: the size
// limits the reader enforces (MaxFileBytes) assume this encoding.
func Encode(w io.Writer, f *File, lim Limits) error {
	f.Format, f.Version = FormatName, Version
	f.printableStrings()
	if err := f.Validate(lim); err != nil {
		return fmt.Errorf("refusing to write an invalid raw file: %w", err)
	}
	data, err := json.Marshal(f)
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}
