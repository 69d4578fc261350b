package sweep_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/sweep"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

func bench(t testing.TB, scenario string, seed uint64, exhaustive bool, prefs sweep.Preferences) (*sweep.Result, int64) {
	t.Helper()
	h, err := sim.NewHost(scenario, seed)
	if err != nil {
		t.Fatal(err)
	}
	sc := h.Scenario()
	period := h.Observe().Current100ns // what the bench's query reads before the sweep
	r := &sweep.Runner{Host: h, Plan: sweep.Plan{Samples: 200, Exhaustive: exhaustive, Seed: seed, Prefs: prefs}}
	points, err := r.Run(context.Background(), sweep.Grid(sc.Finest, sc.Coarsest, sc.Finest, sc.Coarsest))
	if err != nil {
		t.Fatal(err)
	}
	return sweep.Judge(points, prefs, 200, period), h.SleptNs()
}

func TestGrid(t *testing.T) {
	g := sweep.Grid(5000, 156250, 5000, 156250)
	if g[0] != 5000 || g[499] != 5499 || g[500] != 5500 || g[len(g)-1] != 156250 {
		t.Errorf("grid starts %v, ends %d", g[:3], g[len(g)-1])
	}
	for i := 1; i < len(g); i++ {
		if g[i] <= g[i-1] {
			t.Fatalf("grid not increasing at %d: %d after %d", i, g[i], g[i-1])
		}
	}
	if n := len(g); n < 550 || n > 700 {
		t.Errorf("grid has %d candidates, want TickTune's order of magnitude (~550)", n)
	}
	if sub := sweep.Grid(5000, 156250, 5010, 5020); len(sub) != 11 || sub[0] != 5010 {
		t.Errorf("--from 5010 --to 5020 gives %v", sub)
	}
}

// The band each scenario defines for --prefer latency: the fast two-tick
// region above the knee (granted periods, 100 ns units).
var wantBand = map[string][2]uint32{
	"published-pairs": {5020, 5200},
	"knee-26100":      {5020, 5200},
	"knee-26200":      {5016, 5027},
	"narrow-band":     {5105, 5132},
	"alternating":     {5020, 5200},
	"noisy-laptop":    {5020, 5250},
	"global-key":      {5020, 5200},
}

func TestEveryScenarioFindsItsBand(t *testing.T) {
	for _, sc := range sim.Scenarios() {
		want, ok := wantBand[sc.Name]
		if !ok {
			continue
		}
		for seed := uint64(1); seed <= 5; seed++ {
			res, _ := bench(t, sc.Name, seed, false, sweep.DefaultPreferences())
			if res.Recommended < 0 {
				t.Errorf("%s seed %d: nothing recommended", sc.Name, seed)
				continue
			}
			row := res.Rows[res.Recommended]
			inBand := row.Granted >= want[0] && row.Granted <= want[1]
			// The noisy scenario may be wrong only if it says so.
			if !inBand && !(sc.Name == "noisy-laptop" && res.Stability == sweep.Unstable) {
				t.Errorf("%s seed %d: recommended %d, want within %d..%d", sc.Name, seed, row.Granted, want[0], want[1])
			}
		}
	}
}

func TestGatesAreNeverViolated(t *testing.T) {
	for _, sc := range sim.Scenarios() {
		for _, prefer := range []string{"latency", "power"} {
			prefs := sweep.DefaultPreferences()
			prefs.Prefer = prefer
			res, _ := bench(t, sc.Name, 3, false, prefs)
			if res.Recommended < 0 {
				continue
			}
			// The shares are judged for significance (at most 8.1 % at 200
			// samples where the gate says 5 %, 4 % where it says 2 %), so a
			// recommended row may show a p95 over 2.5 ms, never a p90.
			row := res.Rows[res.Recommended]
			s := row.Summary
			if row.StallShare >= 0.04 || s.P50 < sweep.GateMinP50Ns || s.P90 > sweep.GateMaxP95Ns {
				t.Errorf("%s --prefer %s: recommended a row outside the gates: %+v", sc.Name, prefer, s)
			}
			if res.Rows[res.Recommended].Affected {
				t.Errorf("%s: recommended an affected row", sc.Name)
			}
		}
	}
}

func TestPowerPrefersTheCoarsestBandInBudget(t *testing.T) {
	prefs := sweep.DefaultPreferences()
	prefs.Prefer = "power"
	res, _ := bench(t, "knee-26100", 1, false, prefs)
	row := res.Rows[res.Recommended]
	latency, _ := bench(t, "knee-26100", 1, false, sweep.DefaultPreferences())
	if row.Summary.P50 > prefs.BudgetP50 || row.Summary.P95 > prefs.BudgetP95 {
		t.Errorf("power pick %d outside the budget: %+v", row.Granted, row.Summary)
	}
	if row.Granted <= latency.Rows[latency.Recommended].Granted {
		t.Errorf("power pick %d is not coarser than the latency pick", row.Granted)
	}
}

func TestContaminationIsDetected(t *testing.T) {
	res, _ := bench(t, "contaminated", 1, false, sweep.DefaultPreferences())
	if res.HeldElsewhere != 5000 {
		t.Errorf("held elsewhere = %d, want 5000", res.HeldElsewhere)
	}
	// Only a request at or finer than the period in force measured
	// itself: every coarser one, however close, is affected.
	for _, row := range res.Rows {
		if row.Affected != (row.Requested > 5000) {
			t.Errorf("request %d: affected %v under a 5000 hold", row.Requested, row.Affected)
		}
	}
	if res.Recommended >= 0 && res.Rows[res.Recommended].Requested > 5000 {
		t.Errorf("recommended %d, coarser than the 5000 held", res.Rows[res.Recommended].Requested)
	}
}

func TestAdaptiveAgreesWithExhaustiveForLess(t *testing.T) {
	// A small version of tools/bench-agreement, whose 100-seed figures are
	// in BENCHMARKS.md: the clean scenarios must agree on every seed here.
	for _, name := range []string{"knee-26200", "narrow-band", "alternating"} {
		for seed := uint64(1); seed <= 3; seed++ {
			a, aSlept := bench(t, name, seed, false, sweep.DefaultPreferences())
			e, eSlept := bench(t, name, seed, true, sweep.DefaultPreferences())
			g := a.Rows[a.Recommended].Granted
			b := e.Bands[e.Band]
			if g < b.LoGranted || g > b.HiGranted {
				t.Errorf("%s seed %d: adaptive %d outside the exhaustive band %d..%d", name, seed, g, b.LoGranted, b.HiGranted)
			}
			if aSlept*5 > eSlept {
				t.Errorf("%s seed %d: adaptive slept %d, over 20 %% of %d", name, seed, aSlept, eSlept)
			}
		}
	}
}

func TestStoppedBeforeAnythingIsNothingMeasured(t *testing.T) {
	h, err := sim.NewHost("narrow-band", 1)
	if err != nil {
		t.Fatal(err)
	}
	sc := h.Scenario()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := &sweep.Runner{Host: h, Plan: sweep.Plan{Samples: 20, Seed: 1, Prefs: sweep.DefaultPreferences()}}
	if points, err := r.Run(ctx, sweep.Grid(sc.Finest, sc.Coarsest, sc.Finest, sc.Coarsest)); !errors.Is(err, sample.ErrNothingMeasured) || len(points) != 0 {
		t.Errorf("Run = %d points, %v; want sample.ErrNothingMeasured", len(points), err)
	}
	if points, err := r.RunSettings(ctx, "sleep", []timerinfo.Setting{{}}, func([]rawfile.Point) int { return 0 }); !errors.Is(err, sample.ErrNothingMeasured) || len(points) != 0 {
		t.Errorf("RunSettings = %d points, %v; want sample.ErrNothingMeasured", len(points), err)
	}
}

// A stop that falls between two chunks (the next chunk stopped before its
// first wait, as when ESC is pressed during a chunk's last wait) still
// marks the result partial: in the first look the chunk's point has no
// samples yet and is left out, and with it the only point marked Stopped,
// so a partial first look was judged as a whole bench.
func TestStoppedBetweenChunksIsPartial(t *testing.T) {
	for _, after := range []int{1, 3, 10} {
		h, err := sim.NewHost("narrow-band", 1)
		if err != nil {
			t.Fatal(err)
		}
		sc := h.Scenario()
		ctx, cancel := context.WithCancel(context.Background())
		chunks := 0
		r := &sweep.Runner{Host: h, Plan: sweep.Plan{Samples: 40, Seed: 1, Prefs: sweep.DefaultPreferences()}, Progress: func(int, int) {
			if chunks++; chunks == after {
				cancel()
			}
		}}
		points, err := r.Run(ctx, sweep.Grid(sc.Finest, sc.Coarsest, sc.Finest, sc.Coarsest))
		if err != nil {
			t.Fatal(err)
		}
		if res := sweep.Judge(points, sweep.DefaultPreferences(), 40, sc.Coarsest); !res.Partial {
			t.Errorf("stopped after %d chunks: the result of %d points is not partial", after, len(points))
		}
		cancel()
	}
}

// Both benches record their preferences in one snake_case shape, each
// with only the budgets it applies.
func TestPreferencesJSON(t *testing.T) {
	prefs := sweep.DefaultPreferences()
	prefs.Prefer = "power"
	for _, tt := range []struct {
		name string
		got  any
		want string
	}{
		{"windows", sweep.Judge(nil, prefs, 0, 0).Preferences, `{"prefer":"power","budget_p50_ns":1350000,"budget_p95_ns":2000000}`},
		{"linux", sweep.JudgeSlack(nil, 1_000_000, prefs).Preferences, `{"prefer":"power","budget_p99_lateness_ns":100000}`},
	} {
		got, err := json.Marshal(tt.got)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

// benchOn runs the adaptive bench on a scenario's host and judges it as
// the bench does, against the period its query found before the sweep.
func benchOn(t testing.TB, h *sim.Host, seed uint64) *sweep.Result {
	t.Helper()
	sc := h.Scenario()
	q, err := h.Query()
	if err != nil {
		t.Fatal(err)
	}
	prefs := sweep.DefaultPreferences()
	r := &sweep.Runner{Host: h, Plan: sweep.Plan{Samples: 200, Seed: seed, Prefs: prefs}}
	points, err := r.Run(context.Background(), sweep.Grid(sc.Finest, sc.Coarsest, sc.Finest, sc.Coarsest))
	if err != nil {
		t.Fatal(err)
	}
	return sweep.Judge(points, prefs, 200, q.Windows.Current100ns)
}

// Dawson's rule: another process raises the timer to 0.5 ms halfway through
// the bench and releases it later. Every chunk it touched is discarded and
// measured again, the discards are counted with the period seen, and the
// recommendation is the undisturbed machine's.
func TestInterruptedBenchMatchesUndisturbed(t *testing.T) {
	if testing.Short() {
		t.Skip("100 seeds of two benches on the model: run without -short")
	}
	sc, _ := sim.Find("interrupted")
	agree := 0
	for seed := uint64(1); seed <= 100; seed++ {
		got := benchOn(t, sim.NewHostFor(sc, seed), seed)
		want := benchOn(t, sim.NewHostFor(sc.Undisturbed(), seed), seed)
		if d := got.Discarded; d == nil || d.Points == 0 || !slices.Equal(d.PeriodsSeen, []uint32{5000}) {
			t.Errorf("seed %d: discards %+v, want some, seeing 5000", seed, d)
		}
		if want.Discarded != nil {
			t.Errorf("seed %d: the undisturbed run discarded %+v", seed, want.Discarded)
		}
		for _, row := range got.Rows {
			if row.Affected {
				t.Errorf("seed %d: row %d judged affected: a chunk measured during the hold was kept", seed, row.Requested)
				break
			}
		}
		if got.Recommended < 0 || want.Recommended < 0 {
			continue
		}
		g, b := got.Rows[got.Recommended].Granted, want.Bands[want.Band]
		if g >= b.LoGranted && g <= b.HiGranted {
			agree++
		}
	}
	if agree < 99 {
		t.Errorf("the interrupted bench recommended the undisturbed band in %d of 100 seeds, want at least 99", agree)
	}
}

// point builds a sweep point of n waits: p50ns plus up to 2 µs of jitter,
// with the period in force before and after it.
func sweepPoint(request uint32, p50ns int64, n int, before, after uint32) rawfile.Point {
	lat := make([]int64, n)
	for i := range lat {
		lat[i] = p50ns + int64(i%5)*500
	}
	s := timerinfo.Setting{Resolution100ns: request}
	return rawfile.Point{Requested: s, Granted: s, Latencies: lat,
		Conditions: timerinfo.Conditions{CurrentBefore100ns: before, CurrentAfter100ns: after}}
}

// analyze applies Dawson's rule to a file: a point measured while the
// period changed, or under another period than the sweep began with, is
// evidence for no band, and the result counts it.
func TestJudgeLeavesOutDisturbedPoints(t *testing.T) {
	const coarsest = 156250
	points := []rawfile.Point{
		sweepPoint(5100, 1_020_000, 200, coarsest, coarsest),
		sweepPoint(5110, 1_022_000, 200, coarsest, coarsest),
		sweepPoint(5120, 1_024_000, 200, coarsest, coarsest),
		// Measured while a game raised the timer: fast, and no evidence.
		sweepPoint(6000, 1_000_000, 200, coarsest, 5000),
		sweepPoint(6010, 1_000_000, 200, 5000, 5000),
	}
	res := sweep.Judge(points, sweep.DefaultPreferences(), 200, coarsest)
	if len(res.Rows) != 3 {
		t.Fatalf("%d rows, want the 3 undisturbed points", len(res.Rows))
	}
	if d := res.Discarded; d == nil || d.Points != 2 || d.Samples != 400 || !slices.Equal(d.PeriodsSeen, []uint32{5000}) {
		t.Errorf("discarded %+v, want 2 points, 400 samples, seen 5000", d)
	}
	if res.Rows[res.Recommended].Requested != 5110 {
		t.Errorf("recommended %d, want 5110, the middle of the undisturbed band", res.Rows[res.Recommended].Requested)
	}
	// Without a known starting period only a change across the point counts.
	if res := sweep.Judge(points, sweep.DefaultPreferences(), 200, 0); res.Discarded == nil || res.Discarded.Points != 1 {
		t.Errorf("period unknown: discarded %+v, want the one point across which it changed", res.Discarded)
	}
}

// A contaminated run (the period held finer for the whole sweep) is no
// disturbance: its rows are affected, not discarded.
func TestHeldThroughoutIsNotDiscarded(t *testing.T) {
	res, _ := bench(t, "contaminated", 2, false, sweep.DefaultPreferences())
	if res.Discarded != nil {
		t.Errorf("discarded %+v in a sweep the period never changed during", res.Discarded)
	}
}

// A busy Linux run measured here: slack 2 µs with cpu_dma_latency 0 had
// the lowest lateness p50 (+26.3 µs) but a p99 of +573.5 µs; slack 1 ns
// with cpu_dma_latency 0 had +27.2 µs and +91.8 µs. A 0.9 µs difference in
// p50 is noise no user could notice: the tail decides, for slack 1 ns.
// The samples are built to those figures (200 a setting, the bench's
// default): a bulk around the p50 and each setting's tail.
func TestNoiseCannotDecideLinux(t *testing.T) {
	const delay = 1_000_000
	// withFigures builds n latencies whose nearest-rank p50 and p99 are
	// the given lateness (ns), with the tail's share above p99 spread up
	// to tailMax.
	withFigures := func(slack int64, dma bool, p50, p99, tailMax int64, tail int) rawfile.Point {
		const n = 200
		lat := make([]int64, 0, n)
		bulk := n - tail
		for i := 0; i < bulk; i++ {
			// Symmetric around p50, ±3 µs.
			lat = append(lat, delay+p50+int64(i%7-3)*1000)
		}
		// The tail, ascending: up to p99 at rank 198 of 200, then two
		// waits up to tailMax.
		for i := 1; i <= tail-2; i++ {
			lat = append(lat, delay+p50+10_000+int64(i)*(p99-p50-10_000)/int64(tail-2))
		}
		lat = append(lat, delay+(p99+tailMax)/2, delay+tailMax)
		slices.Sort(lat)
		lat[99] = delay + p50 // rank 100 of 200: the p50
		p := slackPoint(slack, dma, 0, 0)
		p.Latencies = lat
		return p
	}
	tests := []struct {
		name   string
		points []rawfile.Point
		want   int // index of the recommended setting
	}{
		{"busy run: the tail decides", []rawfile.Point{
			withFigures(1, true, 27_200, 91_800, 140_000, 3),
			withFigures(2_000, true, 26_300, 573_500, 2_900_000, 8),
		}, 0},
		{"same tails: the least intrusive (larger slack) wins", []rawfile.Point{
			withFigures(1, true, 27_200, 91_800, 95_000, 3),
			withFigures(2_000, true, 26_300, 91_000, 95_000, 3),
			withFigures(1, false, 120_000, 180_000, 190_000, 3),
		}, 1},
		{"a p50 a user can notice still decides", []rawfile.Point{
			withFigures(1, true, 27_200, 91_800, 95_000, 3),
			withFigures(50_000, true, 60_000, 70_000, 72_000, 3),
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := sweep.JudgeSlack(tt.points, delay, sweep.DefaultPreferences())
			for i, row := range res.Rows {
				t.Logf("%v: lateness p50 %d (se %.0f) p99 %d, equivalent %v", row.Setting, row.Lateness.P50, row.P50SE, row.Lateness.P99, row.Equivalent)
				_ = i
			}
			if res.Recommended != tt.want {
				t.Errorf("recommended %d (%v), want %d (%v)", res.Recommended, res.Rows[res.Recommended].Setting, tt.want, res.Rows[tt.want].Setting)
			}
		})
	}
	// The busy run's figures are the issue's.
	busy := sweep.JudgeSlack(tests[0].points, delay, sweep.DefaultPreferences())
	for i, want := range [][2]int64{{27_200, 91_800}, {26_300, 573_500}} {
		if got := busy.Rows[i].Lateness; got.P50 != want[0] || got.P99 != want[1] {
			t.Errorf("row %d lateness %+v, want p50 %d p99 %d", i, got, want[0], want[1])
		}
		if !busy.Rows[i].Equivalent {
			t.Errorf("row %d not marked equivalent", i)
		}
	}
}

// On Windows, bands whose p50s differ by less than NoticeableNs are
// equivalent: the tail, then the coarsest period, chooses among them.
func TestNoiseCannotDecideWindows(t *testing.T) {
	const c = 156250
	band := func(first uint32, p50 int64, late int) []rawfile.Point {
		var out []rawfile.Point
		for r := first; r < first+3; r++ {
			p := sweepPoint(r, p50, 200, c, c)
			for i := 0; i < late; i++ {
				p.Latencies[i] += 2 * int64(r) * 100 / 2 // a tick late... or more
			}
			out = append(out, p)
		}
		return out
	}
	// A failing row between the bands keeps them apart.
	gap := func(r uint32) rawfile.Point { return sweepPoint(r, 3_000_000, 200, c, c) }
	tests := []struct {
		name   string
		points [][]rawfile.Point
		want   uint32
	}{
		{"equal tails: the coarser band", [][]rawfile.Point{band(5100, 1_012_000, 0), {gap(5103), gap(5104), gap(5105)}, band(5106, 1_008_000, 0)}, 5107},
		{"the finer band's tail is lower", [][]rawfile.Point{band(5100, 1_012_000, 0), {gap(5103), gap(5104), gap(5105)}, band(5106, 1_008_000, 6)}, 5101},
		{"a noticeable p50 decides", [][]rawfile.Point{band(5100, 1_040_000, 0), {gap(5103), gap(5104), gap(5105)}, band(5106, 1_008_000, 0)}, 5107},
		{"a noticeable p50 decides, finer", [][]rawfile.Point{band(5100, 1_008_000, 0), {gap(5103), gap(5104), gap(5105)}, band(5106, 1_040_000, 0)}, 5101},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := sweep.Judge(slices.Concat(tt.points...), sweep.DefaultPreferences(), 200, c)
			if res.Recommended < 0 {
				t.Fatal("nothing recommended")
			}
			if got := res.Rows[res.Recommended].Requested; got != tt.want {
				t.Errorf("recommended %d, want %d; bands %+v", got, tt.want, res.Bands)
			}
		})
	}
}

// The gates' shares are judged by one significance test: a row whose
// interference or tail sits on its gate passes, one clearly above fails.
func TestGateSharesAreJudgedForSignificance(t *testing.T) {
	const c = 156250
	row := func(stalls, late int) sweep.Row {
		p := sweepPoint(5100, 1_020_000, 200, c, c)
		for i := 0; i < stalls; i++ {
			p.Latencies[i] = 5_000_000
		}
		for i := stalls; i < stalls+late; i++ {
			p.Latencies[i] = 1_530_000
		}
		return sweep.Judge([]rawfile.Point{p}, sweep.DefaultPreferences(), 200, c).Rows[0]
	}
	for _, tt := range []struct {
		name         string
		stalls, late int
		pass         bool
	}{
		{"clean", 0, 0, true},
		{"3 % stalls: on the 2 % gate", 6, 0, true},
		{"6 % stalls", 12, 0, false},
		{"7 % a tick late: on the 5 % gate", 0, 14, true},
		{"12 % a tick late", 0, 24, false},
	} {
		if got := row(tt.stalls, tt.late); got.Pass != tt.pass {
			t.Errorf("%s: pass %v, want %v (stall share %.3f, tail %.3f)", tt.name, got.Pass, tt.pass, got.StallShare, got.TailShare)
		}
	}
	// At a period over 1 ms one extra tick overshoots by more than 1 ms:
	// it is a late wait for the consistency gate, not a stall.
	p := sweepPoint(13000, 1_300_000, 200, c, c)
	for i := 0; i < 8; i++ { // 4 %: over the 2 % interference gate, inside the tail's
		p.Latencies[i] = 2_600_000
	}
	if r := sweep.Judge([]rawfile.Point{p}, sweep.DefaultPreferences(), 200, c).Rows[0]; !r.Pass || r.StallShare != 0 || r.Summary.Interference != 0.04 {
		t.Errorf("1.3 ms row with 4 %% extra ticks: pass %v, stall share %.3f, interference %.3f; want a pass, no stalls, 4 %% interference", r.Pass, r.StallShare, r.Summary.Interference)
	}
	// 7 % of them: its p95 is a tick late, over 2.5 ms, but 7 % is not
	// significantly over the 5 % a p95 allows; 12 % is.
	for _, tt := range []struct {
		late int
		pass bool
	}{{14, true}, {24, false}} {
		p := sweepPoint(13000, 1_300_000, 200, c, c)
		for i := 0; i < tt.late; i++ {
			p.Latencies[i] = 2_600_000
		}
		if r := sweep.Judge([]rawfile.Point{p}, sweep.DefaultPreferences(), 200, c).Rows[0]; r.Pass != tt.pass || r.Summary.P95 != 2_600_000 {
			t.Errorf("1.3 ms row with %d of 200 waits a tick late: pass %v, p95 %d; want pass %v, p95 2.6 ms", tt.late, r.Pass, r.Summary.P95, tt.pass)
		}
	}
}

// The power pick keeps a margin of NoticeableNs inside the budget: a row
// on the budget is not inside it.
func TestPowerBudgetMargin(t *testing.T) {
	const c = 156250
	prefs := sweep.DefaultPreferences()
	prefs.Prefer = "power"
	points := []rawfile.Point{
		sweepPoint(12000, 1_200_000, 200, c, c),
		sweepPoint(13000, 1_300_000, 200, c, c),
		sweepPoint(13500, prefs.BudgetP50-1_000, 200, c, c), // inside by 1 µs: on the budget
	}
	res := sweep.Judge(points, prefs, 200, c)
	if got := res.Rows[res.Recommended].Requested; got != 13000 {
		t.Errorf("power pick %d, want 13000 (13500 sits on the budget)", got)
	}
}

// A period that stays changed for the rest of the sweep: every point gives
// up after its bound of discards, the bench ends, the file it writes is one
// a reader accepts (no more points than the grid's requests and the
// re-checks), and the judgement says why nothing is usable.
func TestPeriodChangedForGood(t *testing.T) {
	sc, _ := sim.Find("interrupted")
	sc.InterruptFromNs, sc.InterruptUntilNs = 1, 1<<62
	// The whole grid, where many requests share a grant and the file has
	// room for a discarded point per setting; and the 1 ms steps above
	// 2 ms, every one its own grant, where it has none.
	for _, requests := range [][]uint32{sweep.Grid(sc.Finest, sc.Coarsest, sc.Finest, sc.Coarsest), sweep.Grid(sc.Finest, sc.Coarsest, 20_000, sc.Coarsest)} {
		periodChangedForGood(t, sc, requests)
	}
}

func periodChangedForGood(t *testing.T, sc sim.Scenario, requests []uint32) {
	h := sim.NewHostFor(sc, 1)
	q, err := h.Query()
	if err != nil {
		t.Fatal(err)
	}
	r := &sweep.Runner{Host: h, Plan: sweep.Plan{Samples: 20, Seed: 1, Prefs: sweep.DefaultPreferences()}}
	points, err := r.Run(context.Background(), requests)
	if err != nil {
		// Nothing could be written: the error says why.
		if !strings.Contains(err.Error(), "the timer period changed while every candidate was measured (0.5000 ms seen, not the 15.6250 ms the sweep began with)") {
			t.Fatal(err)
		}
		return
	}
	f := &rawfile.File{Format: rawfile.FormatName, Version: rawfile.Version, Tool: rawfile.Tool{Name: "tickscope", Version: "test"},
		Created: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), Command: "bench", Simulated: sc.Name, Query: q, Method: "sleep",
		DelayNs: 1_000_000, Bench: &rawfile.BenchParams{Samples: 20, Seed: 1, Requests: len(requests)}, Points: points}
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bench.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	back, err := rawfile.ReadFile(context.Background(), path, rawfile.Limits{Scenarios: sim.ScenarioNameList()})
	if err != nil {
		t.Fatalf("the bench wrote a file the reader refuses: %v", err)
	}
	res := sweep.JudgeFile(back, sweep.DefaultPreferences())
	if len(res.Rows) != 0 {
		t.Fatalf("%d rows; want none", len(res.Rows))
	}
	if len(points) > len(requests) {
		t.Errorf("%d points for %d requests", len(points), len(requests))
	}
	if err := res.Usable(); res.Discarded != nil && (err == nil || !strings.Contains(err.Error(), "the timer period changed while every candidate was measured (seen 0.5000 ms")) {
		t.Errorf("Usable() = %v", err)
	}
}
