package sample_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
)

func TestSeries(t *testing.T) {
	for _, tt := range []struct {
		name     string
		specs    int
		cancelAt int // the wait at which ctx is cancelled; -1 never
		failAt   int // the wait that fails; 0 never
		points   int // points returned
		told     int // points told to done
		stopped  bool
		wantErr  error
		specErr  int // the index a *SpecError names; -1 none
	}{
		{name: "all measured", specs: 3, cancelAt: -1, points: 3, told: 3, specErr: -1},
		{name: "stopped in the second keeps it partial", specs: 3, cancelAt: 12, points: 2, told: 2, stopped: true, specErr: -1},
		{name: "stopped at the start of the second drops it", specs: 3, cancelAt: 9, points: 1, told: 2, specErr: -1},
		{name: "stopped before anything", specs: 3, cancelAt: 0, points: 0, told: 1, wantErr: sample.ErrNothingMeasured, specErr: -1},
		{name: "a failure names its spec", specs: 3, cancelAt: -1, failAt: 23, points: 2, told: 2, specErr: 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			h := &fakeHost{lateness: []int64{0}, schedule: seam.Relative, failAt: tt.failAt}
			h.onWait = func(i int) {
				if i == tt.cancelAt {
					cancel()
				}
			}
			if tt.cancelAt == 0 {
				cancel()
			}
			specs := make([]sample.Spec, tt.specs)
			for i := range specs {
				specs[i] = spec(10, 0)
			}
			told := 0
			points, err := sample.Series(ctx, h, specs, func(i int, p *rawfile.Point) {
				if i != told {
					t.Errorf("done told index %d, want %d", i, told)
				}
				told++
				p.Method = "labelled"
			})
			var specErr *sample.SpecError
			switch {
			case tt.specErr >= 0:
				if !errors.As(err, &specErr) || specErr.Index != tt.specErr {
					t.Fatalf("err = %v, want a SpecError for spec %d", err, tt.specErr)
				}
			case !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil):
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if len(points) != tt.points || told != tt.told {
				t.Fatalf("%d points, %d told; want %d, %d", len(points), told, tt.points, tt.told)
			}
			for i, p := range points {
				if p.Method != "labelled" {
					t.Errorf("point %d lost done's label", i)
				}
				if want := tt.stopped && i == len(points)-1; p.Stopped != want {
					t.Errorf("point %d stopped = %v, want %v", i, p.Stopped, want)
				}
			}
		})
	}
}
