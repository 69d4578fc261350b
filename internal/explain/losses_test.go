package explain

import (
	"math"
	"slices"
	"testing"

	"github.com/tickscope/tickscope/internal/attribution"
)

// A CPU's pages in order make the gaps a lost mark says: from the last
// event read (the run's start before any) to the next event read (the
// run's end after the last), the mark of a page with no event carried to
// the next page.
func TestLossMark(t *testing.T) {
	type pg struct {
		lost, events bool
		first, last  int64
	}
	for _, c := range []struct {
		name  string
		pages []pg
		want  []attribution.Gap
	}{
		{"no mark", []pg{{false, true, 10, 20}, {false, true, 30, 40}}, nil},
		{"a mark", []pg{{false, true, 10, 20}, {true, true, 30, 40}}, []attribution.Gap{{CPU: 3, From: 20, To: 30}}},
		{"a mark on the first page", []pg{{true, true, 30, 40}}, []attribution.Gap{{CPU: 3, From: math.MinInt64, To: 30}}},
		{"a mark on an empty page", []pg{{false, true, 10, 20}, {true, false, 0, 0}, {false, false, 0, 0}, {false, true, 70, 80}}, []attribution.Gap{{CPU: 3, From: 20, To: 70}}},
		{"two marks", []pg{{true, true, 10, 20}, {false, true, 30, 40}, {true, true, 50, 60}}, []attribution.Gap{{CPU: 3, From: math.MinInt64, To: 10}, {CPU: 3, From: 40, To: 50}}},
		{"a mark and no event after it", []pg{{false, true, 10, 20}, {true, false, 0, 0}}, []attribution.Gap{{CPU: 3, From: 20, To: math.MaxInt64}}},
	} {
		m := lossMark{cpu: 3}
		var gaps []attribution.Gap
		for _, p := range c.pages {
			gaps = m.page(p.lost, p.events, p.first, p.last, gaps)
		}
		gaps = m.end(gaps)
		if !slices.Equal(gaps, c.want) {
			t.Errorf("%s: gaps %+v, want %+v", c.name, gaps, c.want)
		}
	}
}
