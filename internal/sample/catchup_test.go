package sample_test

import (
	"context"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
)

// tickerHost is a periodic waiter that keeps its own schedule, as a
// ticker made at the first wait does (go-ticker, precise-ticker): its
// ticks fall eps after the loop's deadlines, and after a stall it delivers
// at once the last tick due, if less than a period late, skipping older
// ones. After wait stallAt the loop's work overruns by stall: the clock
// jumps between the loop's reading of that wait's end and its reading of
// the next one's start.
type tickerHost struct {
	fakeHost
	eps, stall int64
	stallAt    int
	next       int64 // the ticker's next tick; 0 before the first wait
	stallReads int   // clock readings until the stall
}

func (h *tickerHost) Now() int64 {
	if h.stallReads > 0 {
		if h.stallReads--; h.stallReads == 0 {
			h.now += h.stall
		}
	}
	return h.now
}

func (h *tickerHost) NewWaiter(string, time.Duration) (seam.Waiter, error) { return h, nil }

func (h *tickerHost) Wait(int64) error {
	h.waits++
	if h.next == 0 {
		h.next = h.now + h.eps + delay
	}
	if behind := (h.now - h.next) / delay; h.next <= h.now-delay {
		h.next += behind * delay
	}
	h.now = max(h.now, h.next) + 1000 // a microsecond late, or at once
	h.next += delay
	if h.waits == h.stallAt {
		h.stallReads = 2 // this wait's end, then the next one's start
	}
	return nil
}

// A periodic waiter whose schedule started after the loop's can deliver,
// after a stall, a tick the loop had already counted as overrun: the loop
// must attribute it to the period it belongs to, never to a later one,
// which read as a negative latency (seen: -140577 ns from precise-ticker
// in compare, which the raw file then refused).
func TestCatchUpTickerNeverNegative(t *testing.T) {
	const eps = 10_000 // 10 µs between the loop's start and the ticker's
	// The stall's wait ends at 3 periods + eps + 1 µs; the next start
	// falls at a deadline of the loop plus 0 to 2 eps, and half a period.
	end := 3*delay + eps + 1000
	for _, start := range []int64{6 * delay, 6*delay + eps/3, 6*delay + eps - 1, 6*delay + eps, 6*delay + eps + 1, 9*delay + 2*eps, 5*delay + delay/2} {
		stall := start - end
		h := &tickerHost{fakeHost: fakeHost{schedule: seam.Periodic, lateness: []int64{0}}, eps: eps, stall: stall, stallAt: 3}
		p, err := sampleMeasure(h)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range p {
			if l < 0 {
				t.Errorf("stall %d ns: sample %d has latency %d ns", stall, i, l)
			}
		}
	}
}

func sampleMeasure(h *tickerHost) ([]int64, error) {
	p, err := sample.Measure(context.Background(), h, spec(12, 0), nil)
	if err != nil {
		return nil, err
	}
	return p.Latencies, nil
}
