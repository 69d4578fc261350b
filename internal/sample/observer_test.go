package sample_test

import (
	"context"
	"testing"

	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
)

type recorder struct {
	begun, before int
	after         [][4]int64
}

func (r *recorder) Begin(int64) error { r.begun++; return nil }
func (r *recorder) BeforeWait()       { r.before++ }
func (r *recorder) AfterWait(i int, deadline, start, end int64) {
	r.after = append(r.after, [4]int64{int64(i), deadline, start, end})
}

// An observer is told of every wait, warm-up first with negative indices,
// with the deadline and times the loop used for the sample.
func TestObserverSeesEveryWait(t *testing.T) {
	h := &fakeHost{lateness: []int64{100, 200, 300}, schedule: seam.Periodic}
	s := spec(4, 2)
	r := &recorder{}
	s.Observer = r
	p, err := sample.Measure(context.Background(), h, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.begun != 1 || r.before != 6 || len(r.after) != 6 {
		t.Fatalf("begun %d, before %d, after %d; want 1, 6, 6", r.begun, r.before, len(r.after))
	}
	for k, w := range r.after {
		if w[0] != int64(k-2) {
			t.Errorf("wait %d has index %d, want %d", k, w[0], k-2)
		}
		if k >= 2 {
			if got := w[3] - w[1] + delay; got != p.Latencies[k-2] {
				t.Errorf("wait %d: end-deadline+delay = %d, sample %d", k, got, p.Latencies[k-2])
			}
		}
		if w[2] > w[3] {
			t.Errorf("wait %d began at %d after it ended at %d", k, w[2], w[3])
		}
	}
}
