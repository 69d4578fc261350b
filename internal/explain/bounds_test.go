package explain

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/attribution"
	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// hugeExplainer attributes every wait with more causes and reasons than
// the bounds keep, each name and text far over them and of bytes that
// printable.Line escapes four times over.
type hugeExplainer struct{}

var allKinds = []attribution.Kind{attribution.KindArmedLate, attribution.KindNotAttributed, attribution.KindSlack, attribution.KindIRQDelay,
	attribution.KindTimerIRQ, attribution.KindIRQ, attribution.KindSoftirq, attribution.KindNMI, attribution.KindBlocking, attribution.KindThread,
	attribution.KindRemote, attribution.KindIdleExit, attribution.KindReturn, attribution.KindSelfBlock, attribution.KindRunQueue, attribution.KindUnexplained}

func (hugeExplainer) explainWait(w waitRec, _ int, _ string) attribution.Attribution {
	long := strings.Repeat("\xff", 5000)
	a := attribution.Attribution{LatenessNS: w.lateness(), TimerCPU: rawfile.MaxCPUs - 1, RunCPU: rawfile.MaxCPUs - 1, Blocking: long}
	for i := range 3 * MaxNamedCauses {
		k := allKinds[i%len(allKinds)]
		if i < MaxNamedCauses {
			k = attribution.KindSelfBlock // the longest kind
		}
		a.Causes = append(a.Causes, attribution.Cause{Kind: k, Name: long, Context: long, NS: rawfile.MaxLatencyNs/3 - int64(i)})
	}
	for i := range 3 * MaxReasons {
		a.Reasons = append(a.Reasons, long+string(rune('a'+i)))
	}
	return a
}
func (hugeExplainer) resultNotes(string) []string { return nil }

// The largest explain section the bounds allow, in a measure file of
// 100,000 samples of a minute each, is one analyze reads: within the
// file's 64 MiB, and read back it prints the same report.
func TestLargestExplainSection(t *testing.T) {
	sys := &fakeSystem{}
	h := &fakeHost{late: []int64{1000}, sys: sys}
	res, file, err := Run(context.Background(), h, &timerinfo.Report{OS: "fake"}, sys, Options{Delay: time.Millisecond, Samples: rawfile.MaxMeasureSamples, Layer: Layer0, Worst: MaxWorst}, Reporting{})
	if err != nil {
		t.Fatal(err)
	}
	lat := file.Points[0].Latencies
	waits := make([]waitRec, len(lat))
	for i := range lat {
		lat[i] = rawfile.MaxLatencyNs
		waits[i] = waitRec{Deadline: int64(i) * 2 * rawfile.MaxLatencyNs, End: int64(i) * 2 * rawfile.MaxLatencyNs}
		if i <= MaxExplained {
			waits[i].End += rawfile.MaxLatencyNs - int64(i)
		}
	}
	res.Late, res.Notes, res.Method = []LateWait{}, []string{}, "clock-abs"
	judgeWith(res, 1, waits, Options{Over: time.Nanosecond, Worst: MaxWorst}, nil, nil, hugeExplainer{})
	if len(res.Late) != MaxExplained {
		t.Fatalf("%d late waits explained, want %d", len(res.Late), MaxExplained)
	}
	for _, l := range res.Late {
		if len(l.Causes) > MaxNamedCauses+len(allKinds) || len(l.Reasons) > MaxReasons || len(l.Blocking) > MaxNameBytes {
			t.Fatalf("wait %d: %d causes, %d reasons, blocking of %d bytes", l.Index, len(l.Causes), len(l.Reasons), len(l.Blocking))
		}
	}
	for _, want := range []string{"1001 waits were later than the threshold: the 1000 worst", "more than 16 causes", "more than 8 reasons", "were cut (…)"} {
		if !strings.Contains(strings.Join(res.Notes, "\n"), want) {
			t.Errorf("no note says %q: %q", want, res.Notes)
		}
	}
	file.Explain = res.raw(MaxWorst)
	wantText, wantJSON := printed(t, res, MaxWorst)
	back := roundTrip(t, file)
	var b bytes.Buffer
	if err := rawfile.Encode(&b, back, rawfile.Limits{}); err != nil {
		t.Fatal(err)
	}
	section, _ := json.Marshal(back.Explain)
	t.Logf("the largest file: %d bytes (limit %d), its explain section %d", b.Len(), rawfile.MaxFileBytes, len(section))
	if b.Len() > rawfile.MaxFileBytes {
		t.Errorf("%d bytes, over the file's %d", b.Len(), rawfile.MaxFileBytes)
	}
	again, worst, err := FromFile(back)
	if err != nil {
		t.Fatal(err)
	}
	if gotText, gotJSON := printed(t, again, worst); gotText != wantText || gotJSON != wantJSON {
		t.Error("the report read back differs")
	}
}

// The reader takes as many late waits as explain explains.
func TestRawLateLimit(t *testing.T) {
	if rawfile.MaxExplainLate != MaxExplained {
		t.Errorf("rawfile.MaxExplainLate %d, explain.MaxExplained %d", rawfile.MaxExplainLate, MaxExplained)
	}
}
