package rawfile

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"testing/iotest"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tickscope/tickscope/internal/stats"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// FuzzPieces: the decoder reads its input in pieces and takes a fast path
// for samples wholly inside a piece; read one byte at a time, every value
// crosses a boundary, and the result must be the same. What it accepts is
// I-JSON (RFC 7493: UTF-8, unique names, escapes that are characters) as
// jsontext, a tokenizer with its own conformance tests, validates it.
func FuzzPieces(f *testing.F) {
	file := &File{Format: FormatName, Version: Version, Tool: Tool{Name: "tickscope", Version: "t"},
		Created: time.Date(2026, 11, 30, 1, 2, 3, 0, time.UTC), Command: "measure", Method: "clock-abs", DelayNs: 1e6,
		Query:  &timerinfo.Report{OS: "linux", Linux: &timerinfo.Linux{}, Warnings: []string{"é"}},
		Points: []Point{{Latencies: []int64{1, 0, 60_000_000_000, 123456789}}}}
	data, _ := json.Marshal(file)
	f.Add(data)
	// The explain section: its long list of late waits, nested lists and
	// objects, a float interval.
	file.Explain = &Explain{Worst: 1, Layer: 1, LayerWhy: "w", Waits: 1, ThresholdFrom: "p99",
		Late:           []ExplainWait{{Index: 0, LatenessNs: 5, Causes: []ExplainCause{{Cause: "thread", Name: `a\x1b:1`, Ns: 5}}, Reasons: []string{}, TimerCPU: -1, RunCPU: 0}},
		Trace:          &ExplainTrace{Instance: "i", Missing: []string{"irq:x"}},
		ObserverEffect: &ExplainObserver{ChunkWaits: 10, P50Diff: stats.Interval{Estimate: -1.5e-3, Lo: -2, Hi: 3, Coverage: 0.95, OneSided: true}}}
	data, _ = json.Marshal(file)
	f.Add(data)
	f.Add([]byte(`{"format":"tickscope-raw","version":1,"points":[{"latencies_ns":[1 ,2,	3e2,-0,00,1.0,99999999999999]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		whole, errWhole := decode(context.Background(), bytes.NewReader(data))
		pieces, errPieces := decode(context.Background(), iotest.OneByteReader(bytes.NewReader(data)))
		switch {
		case (errWhole == nil) != (errPieces == nil):
			t.Fatalf("whole: %v; one byte at a time: %v", errWhole, errPieces)
		case errWhole != nil && errWhole.Error() != errPieces.Error():
			t.Fatalf("whole: %v; one byte at a time: %v", errWhole, errPieces)
		case !reflect.DeepEqual(whole, pieces):
			t.Fatalf("whole and one byte at a time decode differently")
		case errWhole == nil && !jsontext.Value(data).IsValid():
			t.Fatalf("accepted a document that is not I-JSON: %q", data)
		}
	})
}
