// Package waitcheck is the short measurement of the OS's default wait that
// the hold commands and status take: what a program waiting 1 ms gets,
// with nothing requested or under a setting.
package waitcheck

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/stats"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// Check is a short measurement of one wait method.
type Check struct {
	Method  string `json:"method"`
	DelayNs int64  `json:"delay_ns"`
	Samples int    `json:"samples"`
	P50Ns   int64  `json:"p50_ns"`
	P99Ns   int64  `json:"p99_ns"`
	// Simulated says the waits were the model's, not measured (the
	// report's simulated says so in JSON).
	Simulated bool `json:"-"`
}

// Taken is how the text says where the check's waits came from.
func (c *Check) Taken() string {
	if c.Simulated {
		return "simulated"
	}
	return "measured"
}

// budget is about how long a quick check may take when every 1 ms wait
// lasts a whole tick of the coarsest period.
const budget = 800 * time.Millisecond

// samples is how many waits a quick check takes on this machine: as many
// 1 ms waits as fit in budget when each lasts a tick of the coarsest
// period (50 at Windows' 15.625 ms default), in tens, 20..200.
func samples(q *timerinfo.Report) int {
	tick := time.Millisecond
	if q.Windows != nil && q.Windows.Coarsest100ns > 0 {
		tick = time.Duration(q.Windows.Coarsest100ns) * 100
	}
	return min(max(int(budget/tick)/10*10, 20), 200)
}

// Measure measures the OS's default wait of 1 ms briefly under setting
// (the zero Setting requests nothing): what a program waiting 1 ms gets.
func Measure(ctx context.Context, host seam.Host, q *timerinfo.Report, setting timerinfo.Setting) (*Check, error) {
	method := host.Methods()[0]
	spec := sample.Spec{Method: method.Name, Delay: time.Millisecond, Samples: samples(q), Warmup: 3, Setting: setting}
	points, err := sample.Series(ctx, host, []sample.Spec{spec}, nil)
	if err != nil {
		var failed *sample.SpecError
		if errors.As(err, &failed) {
			err = failed.Err
		}
		return nil, fmt.Errorf("checking %s(1 ms): %w", method.Name, err)
	}
	s := stats.Summarize(points[0].Running()) // not the samples taken while not running
	return &Check{Method: method.Name, DelayNs: int64(time.Millisecond), Samples: s.Count, P50Ns: s.P50, P99Ns: s.P99, Simulated: q.Arch == "simulated"}, nil
}
