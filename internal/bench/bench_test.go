package bench_test

import (
	"errors"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/bench"
	"github.com/tickscope/tickscope/internal/plantest"
	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sweep"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

func TestBenchRange(t *testing.T) {
	win := plantest.Windows.Windows
	for _, tt := range []struct {
		name             string
		from             uint32
		fromSet          bool
		to               uint32
		toSet            bool
		wantFrom, wantTo uint32
		err              string
	}{
		{"the whole range", 0, false, 0, false, 5000, 156250, ""},
		{"narrowed", 6000, true, 20000, true, 6000, 20000, ""},
		{"below the finest", 4000, true, 0, false, 0, 0, "--from 4000: allowed 5000..156250 (100 ns units) on this machine"},
		{"above the coarsest", 0, false, 200000, true, 0, 0, "--to 200000: allowed 5000..156250 (100 ns units) on this machine"},
		{"from above to", 6000, true, 5500, true, 0, 0, "--from 6000 is above --to 5500"},
	} {
		from, to, err := bench.Range(win, tt.from, tt.fromSet, tt.to, tt.toSet)
		plantest.Usage(t, err, tt.err)
		if from != tt.wantFrom || to != tt.wantTo {
			t.Errorf("%s: %d..%d, want %d..%d", tt.name, from, to, tt.wantFrom, tt.wantTo)
		}
	}
}

func TestPreferences(t *testing.T) {
	ms := time.Millisecond
	for _, tt := range []struct {
		prefer             string
		p50, p95, lateness time.Duration
		err                string
	}{
		{"power", ms, 2 * ms, 50 * time.Microsecond, ""},
		{"speed", ms, ms, ms, "--prefer speed: allowed latency or power"},
		{"latency", 0, ms, ms, "--budget-p50 0s: must be above 0"},
		{"latency", ms, -ms, ms, "--budget-p95 -1ms: must be above 0"},
		{"latency", ms, ms, 0, "--budget-lateness 0s: must be above 0"},
	} {
		prefs, err := bench.Preferences(tt.prefer, tt.p50, tt.p95, tt.lateness)
		plantest.Usage(t, err, tt.err)
		if err == nil && prefs != (sweep.Preferences{Prefer: tt.prefer, BudgetP50: int64(tt.p50), BudgetP95: int64(tt.p95), BudgetLateness: int64(tt.lateness)}) {
			t.Errorf("prefs = %+v", prefs)
		}
	}
}

func TestNewBench(t *testing.T) {
	held := &timerinfo.Report{OS: "windows", Windows: &timerinfo.Windows{Finest100ns: 5000, Coarsest100ns: 156250, Current100ns: 10000}}
	for _, tt := range []struct {
		name    string
		q       *timerinfo.Report
		samples int
		changed string
		method  string
		hints   int
		warns   int
		err     string
	}{
		{"windows", plantest.Windows, 200, "", "sleep", 0, 0, ""},
		{"windows, held elsewhere", held, 200, "", "sleep", 0, 1, ""},
		{"linux", plantest.Linux, 200, "", "clock-abs", 1, 0, ""},
		{"linux as root", plantest.LinuxRoot, 200, "", "clock-abs", 0, 0, ""},
		{"a Windows flag on Linux", plantest.Linux, 200, "budget-p95", "", 0, 0, "--budget-p95 is a Windows bench flag; the Linux bench sweeps timer slack (see --budget-lateness)"},
		{"--from on Linux", plantest.Linux, 200, "from", "", 0, 0, "--from is a Windows bench flag; the Linux bench sweeps timer slack (see --budget-lateness)"},
		{"a Linux flag on Windows", plantest.Windows, 200, "budget-lateness", "", 0, 0, "--budget-lateness is a Linux bench flag; the Windows bench sweeps timer periods (see --budget-p50 and --budget-p95)"},
		{"samples", plantest.Windows, 10, "", "", 0, 0, "--samples 10: allowed 20..1000"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := bench.New(plantest.WindowsHost, tt.q, &rawfile.File{Command: "bench", Query: tt.q}, bench.Options{
				Samples: tt.samples, Prefs: sweep.DefaultPreferences(), Changed: func(flag string) bool { return flag == tt.changed },
			})
			plantest.Usage(t, err, tt.err)
			if err != nil {
				return
			}
			if b.File.Method != tt.method || b.File.DelayNs != int64(time.Millisecond) || b.File.Bench.Samples != tt.samples || b.File.Bench.Requests == 0 || b.Total == 0 {
				t.Errorf("file = %+v, bench %+v, total %d", b.File, b.File.Bench, b.Total)
			}
			if len(b.Hints) != tt.hints || len(b.Warnings) != tt.warns {
				t.Errorf("hints %q, warnings %q", b.Hints, b.Warnings)
			}
		})
	}
	if _, err := bench.New(plantest.WindowsHost, &timerinfo.Report{OS: "darwin"}, &rawfile.File{}, bench.Options{Samples: 200}); !errors.Is(err, seam.ErrUnsupported) {
		t.Errorf("bench elsewhere: %v, want seam.ErrUnsupported", err)
	}
}
