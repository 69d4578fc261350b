package rawfile

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// What the writer puts in the fields whose values come from a known set.
const (
	// ToolName is tool.name: Write stamps it.
	ToolName = "tickscope"
	// PerPointMethod is a compare file's method: each point names its own.
	PerPointMethod = "(per point)"
	// SimulatedArch is query.arch in a file of the model of Windows timers.
	SimulatedArch = "simulated"
	// MaxCPUs bounds query.cpus: the most CPUs Go's runtime counts
	// (runtime.NumCPU; its Linux affinity mask holds 64 Ki CPUs).
	MaxCPUs = 64 * 1024
	// MaxPeriod100ns bounds every Windows timer period a file holds: 1 s is
	// coarser than any period an OS offers.
	MaxPeriod100ns = 10_000_000
)

// Methods are the wait methods tickscope measures on each OS that writes
// raw files (package platform's hosts, with package machine's precise
// ones), each with whether it keeps an absolute periodic schedule
// (points[].periodic). limits_test.go holds them to this build's host.
var Methods = map[string]map[string]bool{
	"windows": {
		"sleep": false, "waitable": false, "waitable-hr": false, "timesetevent": true, "timerqueue": true, "hybrid": true,
		"go": false, "go-until": true, "go-ticker": true, "precise": false, "precise-ticker": true, "spin": true,
	},
	"linux": {
		"clock-abs": true, "nanosleep": false, "timerfd": true, "epoll": false, "hybrid": true,
		"go": false, "go-until": true, "go-ticker": true, "precise": false, "precise-ticker": true, "spin": true,
	},
	"darwin": {"go": false, "go-until": true, "go-ticker": true, "precise": false, "precise-ticker": true, "spin": true},
}

// The methods the bench measures, by the query block it sweeps, and the
// model's only method.
var (
	benchMethods    = map[string]string{"windows": "sleep", "linux": "clock-abs"}
	simulatedMethod = "sleep"
)

func methodNames(os string) string {
	names := make([]string, 0, len(Methods[os]))
	for name := range Methods[os] {
		names = append(names, name)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// validateExact holds the file to what the writer produces beyond ranges
// and sizes: the values that come from a known set, the fields each
// command writes, and the settings and conditions each OS can give.
func (f *File) validateExact(lim Limits) error {
	q := f.Query
	switch {
	case f.Tool.Name != ToolName:
		return fmt.Errorf("tool.name: %q is not %q; only tickscope writes this format", f.Tool.Name, ToolName)
	case q.CPUs < 1 || q.CPUs > MaxCPUs:
		return fmt.Errorf("query.cpus: %d is outside 1..%d", q.CPUs, MaxCPUs)
	}
	if err := f.validateLoad(); err != nil {
		return err
	}
	if f.Simulated != "" {
		if !slices.Contains(lim.Scenarios, f.Simulated) {
			return fmt.Errorf("simulated: %q is not a scenario of the model; the scenarios are %s", f.Simulated, strings.Join(lim.Scenarios, ", "))
		}
		if q.OS != "windows" || q.Arch != SimulatedArch {
			return fmt.Errorf("query: a simulated file's query is the model's (os windows, arch %q), not %s/%s", SimulatedArch, q.OS, q.Arch)
		}
	} else if q.Arch == SimulatedArch {
		return fmt.Errorf("query.arch: %q is the model's; a file of it names its scenario in simulated", SimulatedArch)
	}
	if err := f.validateMethod(); err != nil {
		return err
	}
	for i, p := range f.Points {
		where := fmt.Sprintf("points[%d]", i)
		if err := f.validatePointFields(where, &p); err != nil {
			return err
		}
		if err := f.validateSettingFor(where+".requested", p.Requested, false); err != nil {
			return err
		}
		if err := f.validateSettingFor(where+".granted", p.Granted, true); err != nil {
			return err
		}
		if err := f.validateConditions(where+".conditions", p.Conditions); err != nil {
			return err
		}
	}
	return nil
}

// validateMethod checks the file's method and its points': the file's is
// one of its OS's (the model's: sleep; a bench's: the one it sweeps with;
// a compare's: PerPointMethod), and only a compare's points name theirs,
// each one of the OS's, with periodic as that method keeps its schedule.
func (f *File) validateMethod() error {
	os := f.Query.OS
	want := ""
	switch {
	case f.Command == "compare":
		want = PerPointMethod
	case f.Command == "bench":
		want = benchMethods[os]
	case f.Simulated != "":
		want = simulatedMethod
	}
	switch {
	case want != "" && f.Method != want:
		return fmt.Errorf("method: %q is not %q, which a %s file holds", f.Method, want, f.describe())
	case want == "":
		if _, ok := Methods[os][f.Method]; !ok {
			return fmt.Errorf("method: %q is not a wait method of %s; its methods are %s", f.Method, os, methodNames(os))
		}
	}
	for i, p := range f.Points {
		where := fmt.Sprintf("points[%d]", i)
		if f.Command != "compare" {
			if p.Method != "" || p.Periodic {
				return fmt.Errorf("%s: method and periodic are a compare file's; a %s file's points do not name them", where, f.Command)
			}
			continue
		}
		periodic, ok := Methods[os][p.Method]
		switch {
		case p.Method == "":
			continue // validateCompare says it is missing
		case f.Simulated != "" && p.Method != simulatedMethod:
			return fmt.Errorf("%s.method: %q is not %q, the model's only method", where, p.Method, simulatedMethod)
		case !ok:
			return fmt.Errorf("%s.method: %q is not a wait method of %s; its methods are %s", where, p.Method, os, methodNames(os))
		case p.Periodic != periodic:
			return fmt.Errorf("%s.periodic: %v, but %s %s", where, p.Periodic, p.Method, map[bool]string{true: "keeps a periodic schedule", false: "waits relative to its call"}[periodic])
		}
	}
	return nil
}

// describe names the kind of file for a message: "simulated measure".
func (f *File) describe() string {
	if f.Simulated != "" && f.Command != "compare" && f.Command != "bench" {
		return "simulated " + f.Command
	}
	return f.Command
}

// validatePointFields checks the fields only some commands write: a
// curve's points each carry their delay, a bench's their phase and the
// requests granted the same period.
func (f *File) validatePointFields(where string, p *Point) error {
	switch {
	case f.Command == "curve" && p.DelayNs == 0:
		return fmt.Errorf("%s.delay_ns: missing; every point of a curve file carries its delay", where)
	case f.Command != "curve" && p.DelayNs != 0:
		return fmt.Errorf("%s.delay_ns: a curve file's; a %s file's points take the file's delay", where, f.Command)
	case f.Command != "bench" && p.Phase != "":
		return fmt.Errorf("%s.phase: a bench file's; a %s file has no re-check", where, f.Command)
	case f.Command != "bench" && len(p.SameAs) > 0:
		return fmt.Errorf("%s.same_as_100ns: a bench file's; a %s file measures each request it names", where, f.Command)
	}
	for j, r := range p.SameAs {
		if r == 0 || r > MaxPeriod100ns {
			return fmt.Errorf("%s.same_as_100ns[%d]: %d is outside 1..%d", where, j, r, MaxPeriod100ns)
		}
	}
	return nil
}

// validateSettingFor checks that a setting is one the file's OS can ask
// for or grant: Windows a period (resolution_100ns) or a timeBeginPeriod
// request (time_begin_period_ms), not both; Linux a timer slack, a
// cpu_dma_latency request, or both; macOS none. Only the model's grants
// are marked simulated, each period it grants.
func (f *File) validateSettingFor(where string, s timerinfo.Setting, granted bool) error {
	if err := validateSetting(where, s); err != nil {
		return err
	}
	windows := s.Resolution100ns != 0 || s.TimeBeginPeriodMs != 0
	linux := s.SlackNs != 0 || s.CPUDMALatencyUs != nil
	switch os := f.Query.OS; {
	case windows && os != "windows":
		return fmt.Errorf("%s: a Windows timer request in a file of %s", where, os)
	case linux && os != "linux":
		return fmt.Errorf("%s: a Linux setting (timer slack, cpu_dma_latency) in a file of %s", where, os)
	case s.Resolution100ns != 0 && s.TimeBeginPeriodMs != 0:
		return fmt.Errorf("%s: both resolution_100ns and time_begin_period_ms; a request is one or the other", where)
	case f.Simulated != "" && s.TimeBeginPeriodMs != 0 && granted:
		return fmt.Errorf("%s.time_begin_period_ms: the model grants periods, not timeBeginPeriod", where)
	}
	wantSimulated := granted && f.Simulated != "" && s.Resolution100ns != 0
	if s.Simulated != wantSimulated {
		if s.Simulated {
			return fmt.Errorf("%s.simulated: only a period the model granted is marked simulated", where)
		}
		return fmt.Errorf("%s.simulated: missing; the model marks every period it grants", where)
	}
	return nil
}

// validateConditions checks the conditions a point ran under against what
// its OS records: Windows the period before and after (up to 1 s) and the
// throttling opt-out's outcome, Linux the thread's timer slack (0 .. 1 s,
// as tickscope sets it).
func (f *File) validateConditions(where string, c timerinfo.Conditions) error {
	os := f.Query.OS
	switch {
	case (c.CurrentBefore100ns != 0 || c.CurrentAfter100ns != 0) && os != "windows":
		return fmt.Errorf("%s: the Windows timer period in a file of %s", where, os)
	case c.CurrentBefore100ns > MaxPeriod100ns || c.CurrentAfter100ns > MaxPeriod100ns:
		return fmt.Errorf("%s: a timer period of %d or %d x 100ns is absurd (over 1 s)", where, c.CurrentBefore100ns, c.CurrentAfter100ns)
	case c.TimerSlackNs != 0 && os != "linux":
		return fmt.Errorf("%s.timer_slack_ns: a Linux thread's slack in a file of %s", where, os)
	case c.TimerSlackNs < 0 || c.TimerSlackNs > int64(time.Second):
		return fmt.Errorf("%s.timer_slack_ns: %d is outside 0..1s", where, c.TimerSlackNs)
	case c.CPUNs < 0 || c.WallNs < 0:
		return fmt.Errorf("%s: cpu_ns %d or wall_ns %d is negative", where, c.CPUNs, c.WallNs)
	case c.TimerThrottling != "" && os != "windows":
		return fmt.Errorf("%s.timer_throttling: Windows 11's opt-out in a file of %s", where, os)
	case c.TimerThrottling != "" && c.TimerThrottling != timerinfo.ThrottlingOptedOut && !strings.HasPrefix(c.TimerThrottling, "unavailable: "):
		return fmt.Errorf("%s.timer_throttling: %q is not %q or \"unavailable: ...\"", where, c.TimerThrottling, timerinfo.ThrottlingOptedOut)
	}
	return nil
}

// validateLoad holds a load to what --load writes: a real measure, bench
// or compare (the model runs on a virtual clock and has no CPUs to load),
// 1 .. options.MaxLoadPerCPU threads per CPU of the query, of the one kind.
func (f *File) validateLoad() error {
	l := f.Load
	switch {
	case l == nil:
		return nil
	case !slices.Contains(LoadCommands, f.Command):
		return fmt.Errorf("load: present in a %s file; only %s take --load", f.Command, strings.Join(LoadCommands, ", "))
	case f.Simulated != "":
		return errors.New("load: present in a simulated file; the model runs on a virtual clock and takes no --load")
	case l.Threads < 1 || l.Threads > options.MaxLoadPerCPU*f.Query.CPUs:
		return fmt.Errorf("load.threads: %d is outside 1..%d (%d per CPU of the query's %d)", l.Threads, options.MaxLoadPerCPU*f.Query.CPUs, options.MaxLoadPerCPU, f.Query.CPUs)
	case l.Kind != LoadCPU:
		return fmt.Errorf("load.kind: %q is not %q, the one kind of load tickscope runs", l.Kind, LoadCPU)
	}
	return nil
}
