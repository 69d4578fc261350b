package rawfile

import (
	"bytes"
	"context"
	"fmt"

	"github.com/tickscope/tickscope/internal/sim"
)

// Known is what the tests hold files to: the model's scenarios.
var Known = Limits{Scenarios: sim.ScenarioNameList()}

// Parse decodes and validates a raw-samples document held in memory, for
// the tests, as ReadFile checks a file. Errors say where the problem is: a
// JSON path and a line and column.
func Parse(data []byte) (*File, error) {
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%d bytes is over the size limit of %d bytes: no tickscope run writes a raw file that large", len(data), MaxFileBytes)
	}
	return decodeAndValidate(context.Background(), bytes.NewReader(data), Known)
}
