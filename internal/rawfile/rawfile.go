// Package rawfile writes and reads tickscope's raw-samples file: every
// latency of every measured point, with what was requested and granted and
// the conditions it ran under, so that a run can be shared and re-judged.
//
// The format is a versioned JSON document, specified in docs/raw-format.md.
// Files are written atomically and read strictly: a reader that accepted a
// damaged file would re-judge a run on data nobody measured.
package rawfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// FormatName identifies the document; Version is the one this code writes
// and the only one it reads.
const (
	FormatName = "tickscope-raw"
	Version    = 1
)

// Bounds a reader enforces on values.
const (
	// MaxDelayNs is the longest requested delay a file may hold (1 s, the
	// longest any command requests).
	MaxDelayNs = int64(time.Second)
	// MaxLatencyNs bounds one sample: a wait of over a minute is not a
	// measurement of a timer but of a suspended machine.
	MaxLatencyNs = int64(time.Minute)
)

// Limits are what a file is held to that the format does not fix itself,
// given by the caller: the model's scenarios (sim.ScenarioNameList), one
// of which a simulated file names. The zero Limits knows no scenario, so it
// refuses every simulated file.
type Limits struct {
	Scenarios []string
}

// Limits on what a file may hold, each derived from the most the command
// that writes it can produce, so that a reader accepts every real file and
// refuses anything larger before it costs more memory or time than the
// largest real one (docs/raw-format.md states them; limits_test.go holds
// them to the commands' own maxima in packages plan, sample and sweep).
const (
	// MaxMeasureSamples is measure's --samples maximum (sample.MaxSamples):
	// a measure file is one point of at most this many.
	MaxMeasureSamples = 100_000
	// MaxCurvePoints and MaxCurveSamples are curve's maxima (measure.Curve):
	// at most 1,000 delays of at most 1,000 samples.
	MaxCurvePoints  = 1_000
	MaxCurveSamples = 1_000
	// A compare file is one point per method and setting, each of at most
	// --cycles 100,000 samples (measure.Compare). Windows offers 12 methods
	// (6 native, 3 of Go's, precise, precise-ticker, spin) and 4 settings
	// (none, timeBeginPeriod(1), 1 ms, 0.5 ms); Linux 11 and 3.
	MaxCompareMethods  = 12
	MaxCompareSettings = 4
	MaxCompareCycles   = 100_000
	// A bench samples each candidate at most --samples 20..1000 times
	// (bench.New). The Windows grid (sweep.Grid) holds at most 1,710
	// requests even over a range of 100 ns .. 1 s (the coarsest period a
	// file may hold; real ranges hold about 625), the Linux one 20
	// (sweep.SlackGrid); the bench measures one point per distinct granted
	// period and re-checks at most 4 (the winner, its two band neighbours
	// and the floor).
	MinBenchSamples  = 20
	MaxBenchSamples  = 1_000
	MaxBenchRequests = 2_000
	MaxRecheckPoints = 4

	// MaxSamplesPerPoint is the most any command takes for one point
	// (measure's and compare's 100,000).
	MaxSamplesPerPoint = 100_000
	// MaxPoints is the most points any command writes: a bench's
	// 2,000 + 4 (curve writes 1,000, compare 48, measure 1).
	MaxPoints = MaxBenchRequests + MaxRecheckPoints
	// MaxTotalSamples is the most samples any command writes: a full
	// compare, 12 × 4 × 100,000 = 4,800,000 (a bench 2,004 × 1,000, a
	// curve 1,000 × 1,000, a measure 100,000).
	MaxTotalSamples = MaxCompareMethods * MaxCompareSettings * MaxCompareCycles
	// MaxFileBytes bounds the file: tickscope writes compact JSON, in which
	// a sample takes at most 12 bytes (an 11-digit latency up to 60 s and a
	// comma), so the largest real file, a full compare, is 57.6 MB of
	// samples plus well under 1 MB of everything else.
	MaxFileBytes = 64 << 20
	// MaxStringBytes bounds every string (a warning, a kernel version, a
	// priority): the longest tickscope writes is a few hundred bytes.
	MaxStringBytes = 4096
	// MaxListLength bounds every other list (warnings, clocksources, idle
	// states, same_as_100ns): the longest, same_as_100ns, holds at most a
	// bench's requests.
	MaxListLength = MaxBenchRequests
)

// Commands are the commands that write raw files.
var Commands = []string{"measure", "bench", "curve", "compare"}

// OSes are the query.os values tickscope writes (the OSes it runs on),
// each with the block of the query it fills.
var OSes = []string{"windows", "linux", "darwin"}

// File is a raw-samples document.
type File struct {
	Format  string    `json:"format"`
	Version int       `json:"version"`
	Tool    Tool      `json:"tool"`
	Created time.Time `json:"created"`
	// Command is the tickscope command that wrote the file: "measure",
	// "bench", "curve" or "compare".
	Command string `json:"command"`
	// Simulated names the model scenario the points came from, or is empty
	// for a real measurement.
	Simulated string            `json:"simulated,omitempty"`
	Query     *timerinfo.Report `json:"query"`
	Method    string            `json:"method"`
	DelayNs   int64             `json:"delay_ns"`
	// Bench records how a bench sampled, which its judgement depends on.
	Bench *BenchParams `json:"bench,omitempty"`
	// Load records the busy threads the run kept going beside its
	// measurement (--load); nil for none.
	Load   *Load   `json:"load,omitempty"`
	Points []Point `json:"points"`
	// Explain is explain's attribution of the samples' late waits, in
	// the measure file it writes; nil in every other file.
	Explain *Explain `json:"explain,omitempty"`
}

// Load is the busy threads a run kept going for the whole of its
// measurement (--load of measure, bench and compare).
type Load struct {
	// Threads is how many: 1 .. options.MaxLoadPerCPU × query.cpus, as
	// --load allows.
	Threads int `json:"threads"`
	// Kind is what each did: LoadCPU.
	Kind string `json:"kind"`
}

// LoadCPU is the one kind of load tickscope runs: a loop of integer
// arithmetic in registers, with no memory traffic (sample.CPUBound).
const LoadCPU = "cpu"

// LoadCommands are the commands whose files record --load (explain,
// which takes it too, writes a measure file).
var LoadCommands = []string{"measure", "bench", "compare"}

// BenchParams are a bench's sampling parameters.
type BenchParams struct {
	// Samples is the full count per point (--samples).
	Samples    int    `json:"samples"`
	Exhaustive bool   `json:"exhaustive"`
	Seed       uint64 `json:"seed"`
	// Requests is how many candidate requests the grid held.
	Requests int `json:"requests"`
}

// PhaseRecheck marks the bench's re-check points.
const PhaseRecheck = "recheck"

// Tool says which build wrote a file.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Point is one measured setting.
type Point struct {
	Requested  timerinfo.Setting    `json:"requested"`
	Granted    timerinfo.Setting    `json:"granted"`
	Conditions timerinfo.Conditions `json:"conditions"`
	Warmup     int                  `json:"warmup_discarded"`
	Overruns   int                  `json:"overruns"`
	// Stopped marks a point cut short by the user.
	Stopped bool `json:"stopped,omitempty"`
	// Phase is empty for a measurement, "recheck" for the bench's second
	// look at its winner and the floor.
	Phase string `json:"phase,omitempty"`
	// Method is this point's wait method when it differs from the file's
	// (compare measures many), and Periodic says its waits kept an absolute
	// schedule, so its intervals are the differences of successive wakes.
	Method   string `json:"method,omitempty"`
	Periodic bool   `json:"periodic,omitempty"`
	// DelayNs is this point's requested delay when it differs from the
	// file's (curve measures one point per delay); 0 means the file's.
	DelayNs int64 `json:"delay_ns,omitempty"`
	// SameAs lists other requests (100 ns units) that the OS granted the
	// same period: the bench measured them once, here.
	SameAs []uint32 `json:"same_as_100ns,omitempty"`
	// NotRunning is what the run saw of times the process did not run
	// while this point was measured; nil when it saw none.
	NotRunning *NotRunning `json:"not_running,omitempty"`
	Latencies  []int64     `json:"latencies_ns"`
}

// NotRunning is what a point's measurement saw of times the process did
// not run at all: stopped by job control and continued (SIGCONT), or with
// the machine suspended. A wait across such a time ends late for a reason
// that is not the timer's, so every judgement leaves its sample out
// (Point.Running).
type NotRunning struct {
	// Samples are the indexes into latencies_ns, ascending, of the samples
	// whose wait spanned a time the process did not run.
	Samples []int `json:"samples,omitempty"`
	// Continued counts the continues after a job-control stop (SIGCONT)
	// received while the point was measured, warm-up included.
	Continued int `json:"continued,omitempty"`
	// SuspendedNs is how long the machine was suspended across the
	// point's waits, warm-up included.
	SuspendedNs int64 `json:"suspended_ns,omitempty"`
}

// MaxNotRunning is the most samples of one point that may be marked as
// taken while the process was not running (NotRunning.Samples, a list
// like any other): more stops or suspends than that while one point was
// measured leave nothing worth judging, and the measurement fails.
const MaxNotRunning = MaxListLength

// LeftOut is how many of the point's samples were taken while the
// process was not running.
func (p *Point) LeftOut() int {
	if p.NotRunning == nil {
		return 0
	}
	return len(p.NotRunning.Samples)
}

// Running is the point's latencies without the samples taken while the
// process was not running: what every judgement counts. It is a new slice
// when any are left out, p.Latencies itself otherwise.
func (p *Point) Running() []int64 {
	if p.LeftOut() == 0 {
		return p.Latencies
	}
	out := make([]int64, 0, len(p.Latencies)-p.LeftOut())
	skip := p.NotRunning.Samples
	for i, v := range p.Latencies {
		if len(skip) > 0 && skip[0] == i {
			skip = skip[1:]
			continue
		}
		out = append(out, v)
	}
	return out
}

// ReadFile reads and validates the raw-samples file at path within lim,
// stopping when ctx ends. Only a regular file of at most MaxFileBytes is
// read: a FIFO would block, /dev/zero would never end, and neither is a
// file a tickscope run wrote.
func ReadFile(ctx context.Context, path string, lim Limits) (*File, error) {
	// Opened without blocking (O_NONBLOCK on Unix), so that opening a FIFO
	// cannot hang, then checked before anything is read.
	file, err := openNonBlocking(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return nil, err
	}
	if err := checkRegular(fi); err != nil {
		return nil, err
	}
	return decodeAndValidate(ctx, file, lim)
}

func checkRegular(fi os.FileInfo) error {
	switch {
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s, not a regular file; a raw-samples file is a regular file that --raw wrote", options.FileKind(fi.Mode()))
	case fi.Size() > MaxFileBytes:
		return fmt.Errorf("%d bytes is over the size limit of %d bytes: no tickscope run writes a raw file that large", fi.Size(), MaxFileBytes)
	}
	return nil
}

func decodeAndValidate(ctx context.Context, r io.Reader, lim Limits) (*File, error) {
	f, err := decode(ctx, r)
	if err != nil {
		return nil, err
	}
	if err := f.Validate(lim); err != nil {
		return nil, err
	}
	return f, nil
}

// Validate checks values a decoder cannot: presence, ranges, sizes, and
// that the file is what its command writes, within lim. Write calls it too, so that
// tickscope never writes a file it would refuse to read.
func (f *File) Validate(lim Limits) error {
	switch {
	case f.Tool.Name == "":
		return errors.New("tool.name: missing")
	case f.Created.IsZero():
		return errors.New(`created: missing; want an RFC 3339 time in UTC, e.g. "2026-11-30T01:02:03Z"`)
	case f.Command == "":
		return fmt.Errorf("command: missing; want one of %s", strings.Join(Commands, ", "))
	case !slices.Contains(Commands, f.Command):
		return fmt.Errorf("command: %q is not one of %s", f.Command, strings.Join(Commands, ", "))
	case f.Method == "":
		return errors.New("method: missing")
	case f.DelayNs <= 0:
		return fmt.Errorf("delay_ns: %d is not positive", f.DelayNs)
	case f.DelayNs > MaxDelayNs:
		return fmt.Errorf("delay_ns: %d is over the limit of %d", f.DelayNs, MaxDelayNs)
	case len(f.Points) == 0:
		return errors.New("points: empty")
	case len(f.Points) > MaxPoints:
		return fmt.Errorf("points: %d is over the limit of %d", len(f.Points), MaxPoints)
	}
	if err := f.validateQuery(); err != nil {
		return err
	}
	if err := f.checkStrings(); err != nil {
		return err
	}
	maxSamples, err := f.validateCommand()
	if err != nil {
		return err
	}
	if err := f.validateExact(lim); err != nil {
		return err
	}
	if err := f.validateExplain(); err != nil {
		return err
	}
	total := 0
	for i, p := range f.Points {
		where := fmt.Sprintf("points[%d]", i)
		if err := validateSetting(where+".requested", p.Requested); err != nil {
			return err
		}
		if err := validateSetting(where+".granted", p.Granted); err != nil {
			return err
		}
		if len(p.SameAs) > MaxListLength {
			return fmt.Errorf("%s.same_as_100ns: %d entries is over the limit of %d", where, len(p.SameAs), MaxListLength)
		}
		switch {
		case p.Phase != "" && p.Phase != PhaseRecheck:
			return fmt.Errorf("%s.phase: %q is not one of \"\", %q", where, p.Phase, PhaseRecheck)
		case p.DelayNs < 0 || p.DelayNs > MaxDelayNs:
			return fmt.Errorf("%s.delay_ns: %d is outside 0..%d", where, p.DelayNs, MaxDelayNs)
		case p.Warmup < 0:
			return fmt.Errorf("%s.warmup_discarded: %d is negative", where, p.Warmup)
		case p.Overruns < 0:
			return fmt.Errorf("%s.overruns: %d is negative", where, p.Overruns)
		case len(p.Latencies) == 0:
			return fmt.Errorf("%s.latencies_ns: empty", where)
		case len(p.Latencies) > maxSamples:
			return fmt.Errorf("%s.latencies_ns: %d samples is over the limit of %d for a %s file", where, len(p.Latencies), maxSamples, f.Command)
		}
		if err := f.validateCounts(where, p); err != nil {
			return err
		}
		if err := p.NotRunning.validate(where+".not_running", len(p.Latencies)); err != nil {
			return err
		}
		total += len(p.Latencies)
		for j, v := range p.Latencies {
			if v < 0 {
				return fmt.Errorf("%s.latencies_ns[%d]: %d is negative", where, j, v)
			}
			if v > MaxLatencyNs {
				return fmt.Errorf("%s.latencies_ns[%d]: %d ns is absurd (over %v)", where, j, v, time.Duration(MaxLatencyNs))
			}
		}
	}
	if total > MaxTotalSamples {
		return fmt.Errorf("points: %d samples in all is over the limit of %d", total, MaxTotalSamples)
	}
	return nil
}

// validateQuery checks that the query names an OS tickscope runs on and
// holds that OS's block, and only that one.
func (f *File) validateQuery() error {
	q := f.Query
	if q == nil {
		return errors.New("query: missing")
	}
	blocks := map[string]bool{"windows": q.Windows != nil, "linux": q.Linux != nil, "darwin": q.Other != nil}
	names := map[string]string{"windows": "query.windows", "linux": "query.linux", "darwin": "query.other"}
	switch {
	case q.OS == "":
		return fmt.Errorf("query.os: missing; want one of %s", strings.Join(OSes, ", "))
	case !slices.Contains(OSes, q.OS):
		return fmt.Errorf("query.os: %q is not one of %s", q.OS, strings.Join(OSes, ", "))
	case !blocks[q.OS]:
		return fmt.Errorf("%s: missing; a query of %s holds it", names[q.OS], q.OS)
	case len(q.Warnings) > MaxListLength:
		return fmt.Errorf("query.warnings: %d entries is over the limit of %d", len(q.Warnings), MaxListLength)
	}
	for _, os := range OSes {
		if os != q.OS && blocks[os] {
			return fmt.Errorf("%s: present in a query of %s, which does not write it", names[os], q.OS)
		}
	}
	return nil
}

// validateCommand checks what depends on the command that wrote the file,
// and returns the most samples a point of it may hold.
func (f *File) validateCommand() (maxSamples int, err error) {
	if f.Command != "bench" && f.Bench != nil {
		return 0, fmt.Errorf("bench: present in a %s file; only a bench writes it", f.Command)
	}
	switch f.Command {
	case "measure":
		if len(f.Points) != 1 {
			return 0, fmt.Errorf("points: a measure file holds exactly one point, this one %d", len(f.Points))
		}
		return MaxMeasureSamples, nil
	case "curve":
		if len(f.Points) > MaxCurvePoints {
			return 0, fmt.Errorf("points: %d is over the limit of %d for a curve file", len(f.Points), MaxCurvePoints)
		}
		return MaxCurveSamples, nil
	case "compare":
		return MaxCompareCycles, f.validateCompare()
	}
	// bench
	b := f.Bench
	switch {
	case b == nil:
		return 0, errors.New("bench: missing; a bench file records how it sampled")
	case f.Query.Windows == nil && f.Query.Linux == nil:
		return 0, fmt.Errorf("query: a bench file holds a windows or a linux block (the benches there are); this one is from %s", f.Query.OS)
	case b.Samples < MinBenchSamples || b.Samples > MaxBenchSamples:
		return 0, fmt.Errorf("bench.samples: %d is outside %d..%d", b.Samples, MinBenchSamples, MaxBenchSamples)
	case b.Requests < 1 || b.Requests > MaxBenchRequests:
		return 0, fmt.Errorf("bench.requests: %d is outside 1..%d", b.Requests, MaxBenchRequests)
	case len(f.Points) > b.Requests+MaxRecheckPoints:
		return 0, fmt.Errorf("points: %d is over the %d a bench of %d requests writes (one per request at most, and %d re-checks)",
			len(f.Points), b.Requests+MaxRecheckPoints, b.Requests, MaxRecheckPoints)
	}
	return b.Samples, nil
}

// validateCompare checks a compare file's matrix: every point names its
// method, at most MaxCompareMethods methods and MaxCompareSettings
// settings, each pair measured once.
func (f *File) validateCompare() error {
	methods, settings := map[string]bool{}, map[string]bool{}
	cells := map[[2]string]int{}
	for i, p := range f.Points {
		if p.Method == "" {
			return fmt.Errorf("points[%d].method: missing; every point of a compare file names its method", i)
		}
		setting := p.Requested.String()
		methods[p.Method], settings[setting] = true, true
		switch {
		case len(methods) > MaxCompareMethods:
			return fmt.Errorf("points[%d].method: %q is the %dth method; a compare file holds at most %d", i, p.Method, len(methods), MaxCompareMethods)
		case len(settings) > MaxCompareSettings:
			return fmt.Errorf("points[%d].requested: %s is the %dth setting; a compare file holds at most %d", i, setting, len(settings), MaxCompareSettings)
		}
		if j, dup := cells[[2]string{p.Method, setting}]; dup {
			return fmt.Errorf("points[%d]: method %s under %s was already measured in points[%d]", i, p.Method, setting, j)
		}
		cells[[2]string{p.Method, setting}] = i
	}
	return nil
}

func validateSetting(where string, s timerinfo.Setting) error {
	// 1 s is coarser than any timer period an OS offers.
	if s.Resolution100ns > 10_000_000 {
		return fmt.Errorf("%s.resolution_100ns: %d is absurd (over 1 s)", where, s.Resolution100ns)
	}
	if s.TimeBeginPeriodMs > 1000 {
		return fmt.Errorf("%s.time_begin_period_ms: %d is absurd (over 1 s)", where, s.TimeBeginPeriodMs)
	}
	if s.SlackNs < 0 || s.SlackNs > int64(time.Second) {
		return fmt.Errorf("%s.slack_ns: %d is outside 0..1s", where, s.SlackNs)
	}
	if d := s.CPUDMALatencyUs; d != nil && *d < 0 {
		return fmt.Errorf("%s.cpu_dma_latency_us: %d is negative", where, *d)
	}
	return nil
}

// validate checks a point's not_running against its n samples: present
// only when it says something, its samples strictly ascending indexes
// into latencies_ns.
func (nr *NotRunning) validate(where string, n int) error {
	if nr == nil {
		return nil
	}
	switch {
	case len(nr.Samples) == 0 && nr.Continued == 0 && nr.SuspendedNs == 0:
		return fmt.Errorf("%s: empty; a point where the process ran throughout has none", where)
	case nr.Continued < 0:
		return fmt.Errorf("%s.continued: %d is negative", where, nr.Continued)
	case nr.SuspendedNs < 0:
		return fmt.Errorf("%s.suspended_ns: %d is negative", where, nr.SuspendedNs)
	case len(nr.Samples) > MaxNotRunning:
		return fmt.Errorf("%s.samples: %d entries is over the limit of %d", where, len(nr.Samples), MaxNotRunning)
	}
	for j, i := range nr.Samples {
		switch {
		case i < 0 || i >= n:
			return fmt.Errorf("%s.samples[%d]: %d is not an index into the point's %d latencies", where, j, i, n)
		case j > 0 && i <= nr.Samples[j-1]:
			return fmt.Errorf("%s.samples[%d]: %d does not follow %d; the indexes ascend, each once", where, j, i, nr.Samples[j-1])
		}
	}
	return nil
}

// MaxWarmup is the most warm-up waits a measure, curve or compare point
// discards (sample.DefaultWarmup's ceiling; a curve takes 1, a compare 2).
const MaxWarmup = 100

// validateCounts holds a point's counts of what it did not record to what
// its measurement can have done. Overruns are deadlines of a periodic
// schedule that passed while the loop waited, one delay apart, so a point
// whose method waits relative to its call has none, and the others have
// at most as many as delays fit in the wall time the point took
// (conditions.wall_ns), the measuring loop's own clock. A bench merges
// chunks under the first one's conditions and warms up each of them, so
// only the schedule bounds its overruns and nothing the file holds bounds
// its warm-up.
func (f *File) validateCounts(where string, p Point) error {
	periodic := Methods[f.Query.OS][f.Method]
	if f.Command == "compare" {
		periodic = p.Periodic
	}
	delay := f.DelayNs
	if p.DelayNs > 0 {
		delay = p.DelayNs
	}
	switch {
	case !periodic && p.Overruns > 0:
		return fmt.Errorf("%s.overruns: %d, but the point's method waits relative to its call and skips no deadline; want 0", where, p.Overruns)
	case periodic && f.Command != "bench" && int64(p.Overruns) > p.Conditions.WallNs/delay:
		return fmt.Errorf("%s.overruns: %d deadlines %d ns apart is more than the point's wall time (conditions.wall_ns %d) holds: at most %d", where, p.Overruns, delay, p.Conditions.WallNs, p.Conditions.WallNs/delay)
	case f.Command != "bench" && p.Warmup > MaxWarmup:
		return fmt.Errorf("%s.warmup_discarded: %d is over the limit of %d for a %s file", where, p.Warmup, MaxWarmup, f.Command)
	}
	return nil
}
