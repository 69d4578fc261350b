package explain

import (
	"cmp"
	"math"
	"slices"
	"testing"

	"github.com/tickscope/tickscope/internal/attribution"
)

// A CPU's pages in order make the gaps a lost mark says: from the last
// event read (the run's start before any) to the next event read (the
// run's end after the last), the mark of a page with no event carried to
// the next page; a loss only the stats count makes the drain's stretch a
// gap, on to the next event. The gaps come in order of their start.
func TestLosses(t *testing.T) {
	type step struct {
		page        pageScan
		statsBefore int64 // a stats-counted loss since this, after the page
		stats       bool
	}
	ev := func(first, last int64) pageScan { return pageScan{Events: true, First: first, Last: last} }
	lost := func(s pageScan) pageScan { s.Lost = true; return s }
	for _, c := range []struct {
		name  string
		steps []step
		want  []attribution.Gap
	}{
		{"no mark", []step{{page: ev(10, 20)}, {page: ev(30, 40)}}, nil},
		{"a mark", []step{{page: ev(10, 20)}, {page: lost(ev(30, 40))}}, []attribution.Gap{{CPU: 3, From: 20, To: 30}}},
		{"a mark on the first page", []step{{page: lost(ev(30, 40))}}, []attribution.Gap{{CPU: 3, From: math.MinInt64, To: 30}}},
		{"a mark on an empty page", []step{{page: ev(10, 20)}, {page: pageScan{Lost: true}}, {page: pageScan{}}, {page: ev(70, 80)}}, []attribution.Gap{{CPU: 3, From: 20, To: 70}}},
		{"two marks", []step{{page: lost(ev(10, 20))}, {page: ev(30, 40)}, {page: lost(ev(50, 60))}}, []attribution.Gap{{CPU: 3, From: math.MinInt64, To: 10}, {CPU: 3, From: 40, To: 50}}},
		{"a mark and no event after it", []step{{page: ev(10, 20)}, {page: pageScan{Lost: true}}}, []attribution.Gap{{CPU: 3, From: 20, To: math.MaxInt64}}},
		{"a loss the stats count", []step{{page: ev(10, 20)}, {page: ev(30, 40), statsBefore: 20, stats: true}, {page: ev(50, 60)}}, []attribution.Gap{{CPU: 3, From: 20, To: 40}, {CPU: 3, From: 40, To: 50}}},
		{"a loss the stats count in a drain that read no event", []step{{page: ev(10, 20)}, {page: pageScan{}, statsBefore: 20, stats: true}, {page: ev(30, 40)}}, []attribution.Gap{{CPU: 3, From: 20, To: 30}}},
	} {
		var l losses
		for _, s := range c.steps {
			l.page(3, s.page)
			if s.stats {
				l.statsLost(3, s.statsBefore)
			}
		}
		if got := l.result(); !slices.Equal(got, c.want) {
			t.Errorf("%s: gaps %+v, want %+v", c.name, got, c.want)
		}
		if got := l.result(); !slices.Equal(got, c.want) {
			t.Errorf("%s: result again: %+v", c.name, got)
		}
	}
	// Several CPUs' gaps come in order of their start, whatever the
	// order of the CPUs in the map.
	var l losses
	for c := range 8 {
		l.page(c, lost(ev(int64(100-c), 200)))
		l.page(c, lost(ev(int64(300+c), 400)))
	}
	got := l.result()
	if !slices.IsSortedFunc(got, func(a, b attribution.Gap) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.CPU, b.CPU))
	}) || len(got) != 16 {
		t.Errorf("gaps not in order: %+v", got)
	}
}
