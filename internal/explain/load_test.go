package explain

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// clockHost is the fake host with a thread clock, which a load needs.
type clockHost struct{ *fakeHost }

func (clockHost) ThreadCPU() (func() time.Duration, func(), error) {
	return func() time.Duration { return 0 }, func() {}, nil
}

// A run under --load keeps the busy threads going for the whole
// measurement and no longer, and its result, text and file say so.
func TestRunUnderLoad(t *testing.T) {
	sys := &fakeSystem{}
	h := &fakeHost{late: []int64{1000, 500_000}, sys: sys}
	var ran atomic.Int64
	work := sample.Work{Kind: rawfile.LoadCPU, Run: func(stop *atomic.Bool) uint64 {
		ran.Add(1)
		for !stop.Load() {
			runtime.Gosched()
		}
		return 0
	}}
	host, load, err := sample.Loaded(clockHost{h}, 2, work)
	if err != nil {
		t.Fatal(err)
	}
	procs := runtime.GOMAXPROCS(0)
	res, file, err := Run(context.Background(), host, &timerinfo.Report{OS: "fake", CPUs: 2}, sys, Options{Delay: time.Millisecond, Samples: 20, Over: 2 * time.Microsecond, Layer: Layer0, Worst: 10, Load: load}, Reporting{})
	if err != nil {
		t.Fatal(err)
	}
	if ran.Load() != 2 || runtime.GOMAXPROCS(0) != procs {
		t.Errorf("%d busy threads ran; GOMAXPROCS %d after, %d before", ran.Load(), runtime.GOMAXPROCS(0), procs)
	}
	if res.Load == nil || res.Load.Threads != 2 || res.Load.CPUs != 2 || file.Load == nil || *file.Load != (rawfile.Load{Threads: 2, Kind: rawfile.LoadCPU}) {
		t.Errorf("result's load %+v, file's %+v", res.Load, file.Load)
	}
	var b bytes.Buffer
	res.WriteText(&b, 10)
	if !strings.Contains(b.String(), "\nload: 2 busy threads (a CPU-bound loop each, unpinned) ran throughout, on 2 CPUs\n") {
		t.Errorf("the text does not say the load:\n%s", b.String())
	}
	// Without one, nothing is said.
	res0, file0, err := Run(context.Background(), h, &timerinfo.Report{OS: "fake"}, sys, Options{Delay: time.Millisecond, Samples: 20, Layer: Layer0, Worst: 10}, Reporting{})
	if err != nil || res0.Load != nil || file0.Load != nil {
		t.Errorf("without a load: %v, %+v, %+v", err, res0.Load, file0.Load)
	}
}
