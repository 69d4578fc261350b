package measure_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/measure"
	"github.com/tickscope/tickscope/internal/plantest"
	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

func TestMeasure(t *testing.T) {
	for _, tt := range []struct {
		name    string
		h       plantest.Host
		method  string
		delay   time.Duration
		samples int
		want    string // the method chosen
		err     string
	}{
		{"the default is the first method", plantest.LinuxHost, "", time.Millisecond, 100, "clock-abs", ""},
		{"a named method", plantest.LinuxHost, "nanosleep", 500 * time.Microsecond, 100, "nanosleep", ""},
		{"samples first", plantest.LinuxHost, "bogus", 0, 0, "", "--samples 0: allowed 1..100000"},
		{"too many samples", plantest.LinuxHost, "", time.Millisecond, 100_001, "", "--samples 100001: allowed 1..100000"},
		{"unknown method", plantest.LinuxHost, "sleep", time.Millisecond, 10, "", "--method sleep: valid methods on here: clock-abs, nanosleep, epoll, spin"},
		{"delay bound", plantest.LinuxHost, "", 2 * time.Second, 10, "", "--delay 2s: allowed above 0 and at most 1s"},
		{"whole milliseconds", plantest.WindowsHost, "sleep", 1500 * time.Microsecond, 10, "", "--delay 1.5ms: method sleep waits whole milliseconds: use 1ms, 2ms, ..."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := measure.Measure(tt.h, "here", tt.method, tt.delay, tt.samples)
			plantest.Usage(t, err, tt.err)
			if err == nil && (spec.Method != tt.want || spec.Delay != tt.delay || spec.Samples != tt.samples || spec.Warmup < 5) {
				t.Errorf("spec = %+v", spec)
			}
		})
	}
}

func TestCurve(t *testing.T) {
	ms := time.Millisecond
	for _, tt := range []struct {
		name           string
		h              plantest.Host
		method         string
		from, to, step time.Duration
		samples        int
		want           string // method
		points         int
		err            string
	}{
		{"the default is the first relative method", plantest.LinuxHost, "", ms, 100 * ms, ms, 10, "nanosleep", 100, ""},
		{"from to in steps", plantest.WindowsHost, "sleep", 2 * ms, 10 * ms, 2 * ms, 3, "sleep", 5, ""},
		{"from not below to", plantest.LinuxHost, "", 10 * ms, 10 * ms, ms, 10, "", 0, "--from 10ms is not below --to 10ms"},
		{"to bound", plantest.LinuxHost, "", ms, 2 * time.Second, ms, 10, "", 0, "--to 2s: allowed above 0 and at most 1s"},
		{"step zero", plantest.LinuxHost, "", ms, 10 * ms, 0, 10, "", 0, "--step 0s: must be above 0"},
		{"too many points", plantest.LinuxHost, "", ms, time.Second, 100 * time.Microsecond, 10, "", 0, "--step 100µs: gives 9991 points from 1ms to 1s; at most 1000"},
		{"samples", plantest.LinuxHost, "", ms, 10 * ms, ms, 0, "", 0, "--samples 0: allowed 1..1000"},
		{"whole milliseconds", plantest.WindowsHost, "", ms, 10 * ms, 500 * time.Microsecond, 10, "", 0, "--from 1ms and --step 500µs: method sleep waits whole milliseconds"},
		{"unknown method", plantest.WindowsHost, "bogus", ms, 10 * ms, ms, 10, "", 0, "--method bogus: valid methods on the model: sleep, waitable-hr, timesetevent"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			specs, err := measure.Curve(tt.h, "the model", tt.method, tt.from, tt.to, tt.step, tt.samples)
			plantest.Usage(t, err, tt.err)
			if err != nil {
				return
			}
			if len(specs) != tt.points || specs[0].Method != tt.want || specs[0].Delay != tt.from || specs[len(specs)-1].Delay != tt.to {
				t.Errorf("%d specs from %+v to %+v", len(specs), specs[0], specs[len(specs)-1])
			}
		})
	}
}

func TestCompareSettings(t *testing.T) {
	narrow := &timerinfo.Report{Windows: &timerinfo.Windows{Finest100ns: 10000, Coarsest100ns: 156250}}
	for _, tt := range []struct {
		name string
		q    *timerinfo.Report
		want string
	}{
		{"windows", plantest.Windows, "none timebeginperiod-1 nt-1ms nt-0.5ms"},
		{"plantest.Windows without 0.5 ms", narrow, "none timebeginperiod-1 nt-1ms"},
		{"linux", plantest.Linux, "default slack-1ns"},
		{"linux as root", plantest.LinuxRoot, "default slack-1ns dma-0"},
		{"elsewhere", &timerinfo.Report{}, "none"},
	} {
		var names []string
		for _, s := range measure.CompareSettings(tt.q) {
			names = append(names, s.Name)
		}
		if got := strings.Join(names, " "); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestPick(t *testing.T) {
	valid := []string{"a", "b", "c"}
	for _, tt := range []struct {
		selection, want, err string
	}{
		{"", "a b c", ""},
		{"c, a", "c a", ""},
		{"a,z", "", `--methods a,z: unknown "z"; valid here: a, b, c`},
		{"a,a", "", `--methods a,a: a is named twice; name each once (valid here: a, b, c)`},
		{"a, b,a", "", `--methods "a, b,a": a is named twice; name each once (valid here: a, b, c)`},
		{"a,", "", `--methods a,: an empty name in the list; valid here: a, b, c`},
		{",", "", `--methods ,: an empty name in the list; valid here: a, b, c`},
		{" ", "", `--methods " ": an empty name in the list; valid here: a, b, c`},
		{"a\nb", "", `--methods "a\nb": unknown "a\nb"; valid here: a, b, c`},
	} {
		got, err := measure.Pick("methods", tt.selection, valid)
		plantest.Usage(t, err, tt.err)
		if strings.Join(got, " ") != tt.want {
			t.Errorf("Pick(%q) = %v, want %s", tt.selection, got, tt.want)
		}
	}
}

func TestCompare(t *testing.T) {
	for _, tt := range []struct {
		name              string
		h                 plantest.Host
		q                 *timerinfo.Report
		interval          time.Duration
		cycles            int
		methods, settings string
		cells             int
		err               string
	}{
		{"every method and setting", plantest.LinuxHost, plantest.LinuxRoot, time.Millisecond, 100, "", "", 12, ""},
		{"a selection", plantest.LinuxHost, plantest.Linux, time.Millisecond, 100, "spin", "slack-1ns", 1, ""},
		{"whole-millisecond methods are left out of all", plantest.WindowsHost, plantest.Windows, 500 * time.Microsecond, 100, "", "none", 1, ""},
		{"a named whole-millisecond method is refused", plantest.WindowsHost, plantest.Windows, 500 * time.Microsecond, 100, "sleep", "", 0, "--interval 500µs: method sleep (--methods) waits whole milliseconds: use 1ms, 2ms, ..., or leave sleep out"},
		{"refused among others", plantest.LinuxHost, plantest.Linux, 1500 * time.Microsecond, 100, "clock-abs,epoll", "default", 0, "--interval 1.5ms: method epoll (--methods) waits whole milliseconds: use 1ms, 2ms, ..., or leave epoll out"},
		{"a whole interval takes it", plantest.LinuxHost, plantest.Linux, 2 * time.Millisecond, 100, "epoll", "default", 1, ""},
		{"duplicate settings", plantest.LinuxHost, plantest.Linux, time.Millisecond, 100, "", "default,default", 0, "--settings default,default: default is named twice; name each once (valid here: default, slack-1ns)"},
		{"interval bound", plantest.LinuxHost, plantest.Linux, 0, 100, "", "", 0, "--interval 0s: allowed above 0 and at most 1s"},
		{"cycles bound", plantest.LinuxHost, plantest.Linux, time.Millisecond, 5, "", "", 0, "--cycles 5: allowed 10..100000"},
		{"unknown setting", plantest.LinuxHost, plantest.Linux, time.Millisecond, 100, "", "dma-0", 0, `--settings dma-0: unknown "dma-0"; valid here: default, slack-1ns`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := measure.Compare(tt.h, tt.q, tt.interval, tt.cycles, tt.methods, tt.settings)
			plantest.Usage(t, err, tt.err)
			if err != nil {
				return
			}
			if len(m.Specs) != tt.cells {
				t.Fatalf("%d cells, want %d: %+v", len(m.Specs), tt.cells, m.Specs)
			}
			for i, spec := range m.Specs {
				var p rawfile.Point
				m.Label(i, &p)
				if p.Method != spec.Method || p.Periodic != (spec.Method == "clock-abs" || spec.Method == "spin" || spec.Method == "timesetevent") {
					t.Errorf("cell %d (%s) labelled %q periodic %v", i, spec.Method, p.Method, p.Periodic)
				}
			}
		})
	}
}

// TestCompareSaysWhatItLeavesOut: a matrix of all methods leaves out those
// that cannot wait the interval, and says which, rather than rows of "-".
func TestCompareSaysWhatItLeavesOut(t *testing.T) {
	m, err := measure.Compare(plantest.WindowsHost, plantest.Windows, 1500*time.Microsecond, 100, "", "none")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(m.Methods, " ") + " / " + strings.Join(m.LeftOut, " "); got != "waitable-hr / sleep timesetevent" {
		t.Errorf("methods / left out = %s", got)
	}
}

func TestWhere(t *testing.T) {
	if got := measure.Where(plantest.Linux, ""); got != "linux" {
		t.Errorf("Where = %q", got)
	}
	if got := measure.Where(plantest.Windows, "narrow-band"); got != "the model" {
		t.Errorf("Where simulated = %q", got)
	}
}
