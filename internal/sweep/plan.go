package sweep

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// Grid is the bench's candidate requests (100 ns units) between from and to,
// inside the OS's range finest..coarsest:
//   - every 100 ns over the first 50 µs above the finest period, where the
//     narrow fast band lives (the knee moved from 5023 on build 26100 to
//     5018 on 26200, and the fast window can be under 1 µs wide);
//   - every 5 µs from there up to 1 ms;
//   - every 50 µs from 1 ms up to 2 ms;
//   - every 1 ms from 2 ms up to the coarsest, and the coarsest itself.
func Grid(finest, coarsest, from, to uint32) []uint32 {
	var grid []uint32
	add := func(v uint32) {
		if v >= finest && v <= coarsest && v >= from && v <= to && (len(grid) == 0 || v > grid[len(grid)-1]) {
			grid = append(grid, v)
		}
	}
	v := finest
	for ; v < finest+500; v++ {
		add(v)
	}
	for ; v < 10_000; v += 50 {
		add(v)
	}
	for v = max(v, 10_000); v < 20_000; v += 500 {
		add(v)
	}
	for v = max(v, 20_000); v < coarsest; v += 10_000 {
		add(v)
	}
	add(coarsest)
	return grid
}

// Plan says how to sample.
type Plan struct {
	// Samples is the most any point gets, and what every point gets in the
	// exhaustive design.
	Samples    int
	Exhaustive bool
	Seed       uint64
	Prefs      Preferences
}

// Sampling constants of the adaptive design.
const (
	// probeSamples is what every distinct setting gets first: enough for a
	// median of a distribution that is quantised to whole ticks.
	probeSamples = 10
	// chunkSamples is the unit of interleaving: settings take turns in
	// chunks this size so that drift is shared, not mistaken for a
	// difference between neighbours.
	chunkSamples = 20
	// chunkWarmup waits are dropped after each change of setting: the first
	// wait after a new period ends on a tick of the old schedule.
	chunkWarmup = 2
	// maxRounds bounds the adaptive top-up loop.
	maxRounds = 4
	// tierSamples is what every row of a contending band gets: enough that
	// one interfering wait is 2 %, the gate.
	tierSamples = 50
	// tierReach is how many rows either side of a band's middle get the
	// full count.
	tierReach = 2
	// maxDiscards bounds how often one point's chunks are discarded
	// because the timer period changed while they were measured. A chunk
	// is measured again after the round it was discarded in, so a point
	// gives up only when the period stayed changed over that many rounds:
	// another process holds it for good, and the point is left short (or
	// out) rather than measured forever.
	maxDiscards = 4
)

// Runner measures a plan on a host.
type Runner struct {
	Host seam.Host
	Plan Plan
	// Progress is told the samples taken and the current estimate of the
	// total.
	Progress func(done, total int)
	// Period100ns is the timer period in force before the sweep, as the
	// raw file's query records it, which every chunk must see before and
	// after it (Dawson's rule). 0: Run reads it when it starts.
	Period100ns uint32

	done, total int
	rng         *rand.Rand
	method      string
	// discards counts each point's discarded chunks. discarded keeps
	// them, merged into one point per target, to be written with the
	// points: they were measured, and analyze counts them as the bench
	// did. room is how many such points the raw file can still hold: a
	// reader accepts no more points than the grid's requests and the
	// re-checks (rawfile), and the distinct granted periods take their
	// share of those.
	discards    map[*rawfile.Point]int
	discarded   []rawfile.Point
	discardedAt map[*rawfile.Point]int
	room        int
	seen        []uint32
}

// group is one distinct setting: the requests the OS granted one period.
type group struct {
	point    rawfile.Point
	affected bool
}

// Run sweeps the requests and returns the points to judge: one per distinct
// granted period, then the re-check points. When ctx ends early the points
// measured so far are returned, the last marked Stopped, or
// sample.ErrNothingMeasured when there are none.
func (r *Runner) Run(ctx context.Context, requests []uint32) ([]rawfile.Point, error) {
	r.rng = rand.New(rand.NewPCG(r.Plan.Seed, 0x7469636b))
	r.method = "sleep"
	r.resetDiscards()
	if r.Period100ns == 0 {
		r.Period100ns = r.Host.Observe().Current100ns
	}
	groups, err := r.groups(requests)
	if err != nil {
		return nil, err
	}
	r.room = len(requests) - len(groups)
	if r.Plan.Exhaustive {
		// The fixed design: every setting gets the full count, in chunks
		// that take turns, so that each row's samples span the whole run's
		// drift instead of one moment of it.
		all := make([]int, len(groups))
		for i := range all {
			all[i] = i
		}
		if err := r.interleave(ctx, groups, all, r.Plan.Samples); err != nil {
			return result(ctx, r.finish(groups, nil), err)
		}
	} else {
		// A first look at every setting, in random order.
		r.total = len(groups) * probeSamples
		order := r.rng.Perm(len(groups))
		targets, chunks := make([]*rawfile.Point, len(order)), make([]int, len(order))
		for j, i := range order {
			targets[j], chunks[j] = &groups[i].point, probeSamples
		}
		if err := r.measureRound(ctx, targets, chunks); err != nil {
			return result(ctx, r.finish(groups, nil), err)
		}
	}
	if !r.Plan.Exhaustive {
		// Tier one: every row of a band that could win gets enough samples
		// for its gates; tier two: the rows around the would-be
		// recommendation get the full count. Repeat while the judgement
		// moves.
		for round := 0; round < maxRounds; round++ {
			tier1, tier2 := r.targets(groups)
			if len(tier1) == 0 && len(tier2) == 0 {
				break
			}
			if err := r.interleave(ctx, groups, tier1, min(tierSamples, r.Plan.Samples)); err != nil {
				return result(ctx, r.finish(groups, nil), err)
			}
			if err := r.interleave(ctx, groups, tier2, r.Plan.Samples); err != nil {
				return result(ctx, r.finish(groups, nil), err)
			}
		}
	}
	rechecks, err := r.recheck(ctx, groups)
	points, err := result(ctx, r.finish(groups, rechecks), err)
	if errors.Is(err, sample.ErrNothingMeasured) && ctx.Err() == nil && len(r.discards) > 0 {
		// Not stopped: every chunk was discarded and none could be written.
		return nil, fmt.Errorf("the timer period changed while every candidate was measured (%s ms seen, not the %s ms the sweep began with): close what raises the timer and run again",
			periodsMS(r.seen), timerinfo.FormatPeriodMS(r.Period100ns))
	}
	return points, err
}

// result is what a run returns: the points measured, without an error
// when ctx stopped the run (they are the result so far, the last marked
// Stopped), and sample.ErrNothingMeasured when there are none.
func result(ctx context.Context, points []rawfile.Point, err error) ([]rawfile.Point, error) {
	if ctx.Err() != nil {
		err = nil
		// A stop between two chunks stops the next one before its first
		// wait: its point may have no samples and be left out, and with it
		// the only mark that the run was cut short.
		if n := len(points); n > 0 && !slices.ContainsFunc(points, func(p rawfile.Point) bool { return p.Stopped }) {
			points[n-1].Stopped = true
		}
	}
	if err == nil && len(points) == 0 {
		return nil, sample.ErrNothingMeasured
	}
	return points, err
}

// finish lists the points to judge or write: the sweep's, the re-check's,
// and the chunks discarded because the period changed.
func (r *Runner) finish(groups []group, rechecks []rawfile.Point) []rawfile.Point {
	out := make([]rawfile.Point, 0, len(groups)+len(rechecks)+len(r.discarded))
	for _, g := range groups {
		if len(g.point.Latencies) > 0 {
			out = append(out, g.point)
		}
	}
	out = append(out, rechecks...)
	for _, d := range r.discarded {
		if len(d.Latencies) > 0 {
			out = append(out, d)
		}
	}
	return out
}

// groups asks the OS for every request once, without waiting, and merges
// neighbouring requests it grants the same period: they are provably the
// same setting and are measured once. A grant well below its request means
// another process holds a finer period; such requests are never merged.
func (r *Runner) groups(requests []uint32) ([]group, error) {
	var groups []group
	for _, req := range requests {
		held := r.Host.Observe().Current100ns
		granted, release, err := r.Host.Apply(timerinfo.Setting{Resolution100ns: req})
		if err != nil {
			return nil, err
		}
		if err := release(); err != nil {
			return nil, err
		}
		isAffected := timerinfo.HeldFinerThan(held, req) || timerinfo.GrantShowsFinerHold(req, granted.Resolution100ns)
		if n := len(groups); n > 0 && !isAffected && !groups[n-1].affected && groups[n-1].point.Granted.Resolution100ns == granted.Resolution100ns {
			groups[n-1].point.SameAs = append(groups[n-1].point.SameAs, req)
			continue
		}
		groups = append(groups, group{
			point:    rawfile.Point{Requested: timerinfo.Setting{Resolution100ns: req}, Granted: granted},
			affected: isAffected,
		})
	}
	return groups, nil
}

// measureRound adds chunks[i] samples to targets[i], in that order, through
// the one measurement loop, merging each chunk into its point as it is
// measured. A chunk across which the timer period changed, or that saw
// another period than the sweep began with (Disturbed), is discarded, kept
// for the raw file, and measured again after the round, up to maxDiscards
// times a point. It returns context.Canceled when ctx stopped the round.
func (r *Runner) measureRound(ctx context.Context, targets []*rawfile.Point, chunks []int) error {
	for len(targets) > 0 {
		specs := make([]sample.Spec, len(targets))
		for i, p := range targets {
			specs[i] = sample.Spec{Method: r.method, Delay: time.Millisecond, Samples: chunks[i], Warmup: chunkWarmup, Setting: p.Requested}
		}
		stopped := false
		var again []*rawfile.Point
		var againChunks []int
		_, err := sample.Series(ctx, r.Host, specs, func(i int, chunk *rawfile.Point) {
			r.done += len(chunk.Latencies)
			stopped = stopped || chunk.Stopped
			if Disturbed(chunk, r.Period100ns) {
				r.keepDiscarded(targets[i], chunk)
				r.discards[targets[i]]++
				if r.discards[targets[i]] < maxDiscards {
					again, againChunks = append(again, targets[i]), append(againChunks, chunks[i])
					r.total += chunks[i]
				}
			} else {
				merge(targets[i], chunk)
			}
			if r.Progress != nil {
				r.Progress(r.done, r.total)
			}
		})
		if stopped || errors.Is(err, sample.ErrNothingMeasured) {
			return context.Canceled
		}
		if err != nil {
			return err
		}
		targets, chunks = again, againChunks
	}
	return nil
}

func (r *Runner) resetDiscards() {
	r.discards, r.discarded, r.discardedAt, r.room, r.seen = map[*rawfile.Point]int{}, nil, map[*rawfile.Point]int{}, 0, nil
}

// keepDiscarded adds a discarded chunk to its target's discarded point, up
// to the full sample count (the most a reader accepts in a bench's point).
// The point keeps its first chunk's conditions, which show the change. When
// the file has no room for another point the chunk is measured again all
// the same but not written, and the discards shown are a lower bound: it
// takes a period that changes during most of the sweep's settings.
func (r *Runner) keepDiscarded(target, chunk *rawfile.Point) {
	r.seen = addPeriodsSeen(r.seen, chunk, r.Period100ns)
	i, ok := r.discardedAt[target]
	if !ok {
		if r.room <= 0 {
			return
		}
		r.room--
		d := *chunk
		d.Phase = target.Phase
		d.Latencies, d.NotRunning = nil, nil
		r.discarded = append(r.discarded, d)
		i = len(r.discarded) - 1
		r.discardedAt[target] = i
	} else {
		d := &r.discarded[i]
		d.Warmup += chunk.Warmup
		d.Overruns += chunk.Overruns
		d.Stopped = d.Stopped || chunk.Stopped
	}
	d := &r.discarded[i]
	kept := chunk.Latencies[:min(len(chunk.Latencies), max(r.Plan.Samples-len(d.Latencies), 0))]
	addNotRunning(d, chunk.NotRunning, len(d.Latencies), len(d.Latencies)+len(kept))
	d.Latencies = append(d.Latencies, kept...)
}

// givenUp reports whether a point's chunks were discarded maxDiscards times:
// the period stays changed, and it is measured no more.
func (r *Runner) givenUp(p *rawfile.Point) bool { return r.discards[p] >= maxDiscards }

// merge adds a chunk to a point, keeping the finest period seen held.
func merge(p *rawfile.Point, chunk *rawfile.Point) {
	if len(p.Latencies) == 0 {
		p.Conditions = chunk.Conditions
		p.Granted = chunk.Granted
	} else {
		if b := chunk.Conditions.CurrentBefore100ns; b != 0 && b < p.Conditions.CurrentBefore100ns {
			p.Conditions.CurrentBefore100ns = b
		}
		p.Conditions.CurrentAfter100ns = chunk.Conditions.CurrentAfter100ns
	}
	p.Warmup += chunk.Warmup
	p.Overruns += chunk.Overruns
	p.Stopped = p.Stopped || chunk.Stopped
	addNotRunning(p, chunk.NotRunning, len(p.Latencies), len(p.Latencies)+len(chunk.Latencies))
	p.Latencies = append(p.Latencies, chunk.Latencies...)
}

// targets are the groups still short of samples in the bands that could
// win (those within a band's tolerance of the best p50, and for --prefer
// power the coarsest band inside the budget and its finer neighbour):
// tier1 every row of them, tier2 the rows around each one's middle.
func (r *Runner) targets(groups []group) (tier1, tier2 []int) {
	res := Judge(r.finish(groups, nil), r.Plan.Prefs, r.Plan.Samples, r.Period100ns)
	want := map[int]bool{}
	best := int64(-1)
	for _, b := range res.Bands {
		if b.P50 >= GateMinP50Ns && (best < 0 || b.P50 < best) {
			best = b.P50
		}
	}
	for i, b := range res.Bands {
		if best >= 0 && b.P50 >= GateMinP50Ns && b.P50 <= best+BandToleranceNs {
			want[i] = true
		}
	}
	if r.Plan.Prefs.Prefer == "power" {
		// The coarsest band near the budget, and the next finer one: a
		// first look cannot tell a p50 a few µs either side of the budget,
		// so the bands on the border get the full count too.
		for i := len(res.Bands) - 1; i >= 0; i-- {
			if res.Bands[i].P50 <= r.Plan.Prefs.BudgetP50+BandToleranceNs && res.Bands[i].P50 >= GateMinP50Ns {
				want[i] = true
				if i > 0 {
					want[i-1] = true
				}
				if res.Bands[i].P50 <= r.Plan.Prefs.BudgetP50-BandToleranceNs {
					break
				}
			}
		}
	}
	if res.Band >= 0 {
		want[res.Band] = true
	}
	short := func(row, n int) bool {
		return len(groups[row].point.Latencies) < n && !groups[row].affected && !r.givenUp(&groups[row].point)
	}
	// The runner-up's middle row gets the full count too, so that the
	// recommendation's margin over it is measured: the band the pick
	// would take without the recommended one, were every band that has not
	// failed a gate measured to the full count.
	if res.Band >= 0 {
		if b := pick(res.Rows, res.Bands, r.Plan.Prefs, res.Band, contending).band; b >= 0 && !want[b] {
			if row := middle(res.Bands[b]); short(row, r.Plan.Samples) {
				tier2 = append(tier2, row)
			}
		}
	}
	// Rows are sorted by request, and so are groups (built in request
	// order), so a row index is a group index.
	for i, b := range res.Bands {
		if !want[i] {
			continue
		}
		mid := (len(b.Rows) - 1) / 2
		for j, row := range b.Rows {
			if short(row, min(tierSamples, r.Plan.Samples)) {
				tier1 = append(tier1, row)
			}
			if j >= mid-tierReach && j <= mid+tierReach && short(row, r.Plan.Samples) {
				tier2 = append(tier2, row)
			}
		}
	}
	return tier1, tier2
}

// interleave tops the targets up to n samples each, in chunks that take
// turns in a random order every round.
func (r *Runner) interleave(ctx context.Context, groups []group, targets []int, n int) error {
	for _, t := range targets {
		r.total += n - len(groups[t].point.Latencies)
	}
	for {
		r.rng.Shuffle(len(targets), func(i, j int) { targets[i], targets[j] = targets[j], targets[i] })
		var round []*rawfile.Point
		var chunks []int
		for _, t := range targets {
			if short := n - len(groups[t].point.Latencies); short > 0 && !r.givenUp(&groups[t].point) {
				round, chunks = append(round, &groups[t].point), append(chunks, min(short, chunkSamples))
			}
		}
		if len(round) == 0 {
			return nil
		}
		if err := r.measureRound(ctx, round, chunks); err != nil {
			return err
		}
	}
}

// recheck measures the recommended setting, its band neighbours and the
// floor again, interleaved, half the sample count each.
func (r *Runner) recheck(ctx context.Context, groups []group) ([]rawfile.Point, error) {
	res := Judge(r.finish(groups, nil), r.Plan.Prefs, r.Plan.Samples, r.Period100ns)
	if res.Recommended < 0 {
		return nil, nil
	}
	idx := []int{res.Recommended}
	band := res.Bands[res.Band].Rows
	pos := indexOf(band, res.Recommended)
	if pos > 0 {
		idx = append(idx, band[pos-1])
	}
	if pos+1 < len(band) {
		idx = append(idx, band[pos+1])
	}
	if res.Floor >= 0 && res.Floor != res.Recommended {
		idx = append(idx, res.Floor)
	}
	return r.recheckRows(ctx, groups, idx)
}

// recheckRows measures the given groups again, interleaved, half the
// sample count each, as re-check points.
func (r *Runner) recheckRows(ctx context.Context, groups []group, idx []int) ([]rawfile.Point, error) {
	idx = slices.Compact(idx)
	points := make([]rawfile.Point, len(idx))
	for i, row := range idx {
		points[i] = rawfile.Point{Requested: groups[row].point.Requested, Phase: rawfile.PhaseRecheck}
	}
	n := max(r.Plan.Samples/2, chunkSamples)
	r.total += n * len(points)
	order := make([]int, len(points))
	for i := range order {
		order[i] = i
	}
	for {
		r.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		var round []*rawfile.Point
		var chunks []int
		for _, i := range order {
			if short := n - len(points[i].Latencies); short > 0 && !r.givenUp(&points[i]) {
				round, chunks = append(round, &points[i]), append(chunks, min(short, chunkSamples))
			}
		}
		if len(round) == 0 {
			return points, nil
		}
		if err := r.measureRound(ctx, round, chunks); err != nil {
			return nonEmpty(points), err
		}
	}
}

func nonEmpty(points []rawfile.Point) []rawfile.Point {
	var out []rawfile.Point
	for _, p := range points {
		if len(p.Latencies) > 0 {
			out = append(out, p)
		}
	}
	return out
}

func indexOf(s []int, v int) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}
