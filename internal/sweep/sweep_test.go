package sweep_test

import (
	"context"
	"testing"

	"github.com/tickscope/tickscope/internal/sweep"
	"github.com/tickscope/tickscope/internal/winmodel"
)

func bench(t testing.TB, scenario string, seed uint64, exhaustive bool, prefs sweep.Preferences) (*sweep.Result, int64) {
	t.Helper()
	h, err := winmodel.New(scenario, seed)
	if err != nil {
		t.Fatal(err)
	}
	sc := h.Scenario()
	r := &sweep.Runner{Host: h, Plan: sweep.Plan{Samples: 200, Exhaustive: exhaustive, Seed: seed, Prefs: prefs}}
	points, err := r.Run(context.Background(), sweep.Grid(sc.Finest, sc.Coarsest, sc.Finest, sc.Coarsest))
	if err != nil {
		t.Fatal(err)
	}
	return sweep.Judge(points, prefs, 200), h.SleptNs()
}

func TestExplore(t *testing.T) {
	for _, sc := range winmodel.Scenarios() {
		for _, ex := range []bool{false, true} {
			res, slept := bench(t, sc.Name, 1, ex, sweep.DefaultPreferences())
			rec := "none"
			if res.Recommended >= 0 {
				row := res.Rows[res.Recommended]
				b := res.Bands[res.Band]
				rec = fmtRow(row.Requested, row.Summary.P50, b.LoGranted, b.HiGranted, len(b.Rows))
			}
			t.Logf("%-16s exhaustive=%-5v slept %6.1fs rows %d bands %d rec %s %s held %d", sc.Name, ex, float64(slept)/1e9, len(res.Rows), len(res.Bands), rec, res.Stability, res.HeldElsewhere)
		}
	}
}
