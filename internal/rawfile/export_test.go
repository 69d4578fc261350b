package rawfile

import (
	"bytes"
	"context"
	"fmt"
)

// Parse decodes and validates a raw-samples document held in memory, for
// the tests, as ReadFile checks a file. Errors say where the problem is: a
// JSON path and a line and column.
func Parse(data []byte) (*File, error) {
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%d bytes is over the size limit of %d bytes: no tickscope run writes a raw file that large", len(data), MaxFileBytes)
	}
	return decodeAndValidate(context.Background(), bytes.NewReader(data))
}
