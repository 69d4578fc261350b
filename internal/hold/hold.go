// Package hold decides and does what the hold commands do: apply (hold a
// setting, set another process's slack, install the startup holder), run,
// status, verify-global, global on|off and startup remove. It holds their
// refusal rules and their results (the JSON shapes of docs/json.md), as
// functions of the seam's Host and System, so that the rules are tested
// against the model of Windows timers and an in-memory System
// (package sim). Package report renders the results as text; cmd/tickscope
// parses the command line, calls here, and prints.
package hold

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

// WaitCheck is a short measurement of one wait method.
type WaitCheck struct {
	Method  string `json:"method"`
	DelayNs int64  `json:"delay_ns"`
	Samples int    `json:"samples"`
	P50Ns   int64  `json:"p50_ns"`
	P99Ns   int64  `json:"p99_ns"`
	// Simulated says the waits were the model's, not measured (the
	// report's simulated says so in JSON).
	Simulated bool `json:"-"`
}

// taken is how the text says where the check's waits came from.
func (c *WaitCheck) taken() string {
	if c.Simulated {
		return "simulated"
	}
	return "measured"
}

// checkBudget is about how long a quick check may take when every 1 ms
// wait lasts a whole tick of the coarsest period.
const checkBudget = 800 * time.Millisecond

// CheckSamples is how many waits a quick check takes on this machine: as
// many 1 ms waits as fit in checkBudget when each lasts a tick of the
// coarsest period (50 at Windows' 15.625 ms default), in tens, 20..200.
func CheckSamples(q *timerinfo.Report) int {
	tick := time.Millisecond
	if q.Windows != nil && q.Windows.Coarsest100ns > 0 {
		tick = time.Duration(q.Windows.Coarsest100ns) * 100
	}
	return min(max(int(checkBudget/tick)/10*10, 20), 200)
}

// Check measures the OS's default wait of 1 ms briefly under setting (the
// zero Setting requests nothing): what a program waiting 1 ms gets.
func Check(ctx context.Context, host seam.Host, q *timerinfo.Report, setting timerinfo.Setting) (*WaitCheck, error) {
	method := host.Methods()[0]
	spec := sample.Spec{Method: method.Name, Delay: time.Millisecond, Samples: CheckSamples(q), Warmup: 3, Setting: setting}
	points, err := sample.Series(ctx, host, []sample.Spec{spec}, nil)
	if err != nil {
		var failed *sample.SpecError
		if errors.As(err, &failed) {
			err = failed.Err
		}
		return nil, fmt.Errorf("checking %s(1 ms): %w", method.Name, err)
	}
	s := stats.Summarize(points[0].Running()) // not the samples taken while not running
	return &WaitCheck{Method: method.Name, DelayNs: int64(time.Millisecond), Samples: s.Count, P50Ns: s.P50, P99Ns: s.P99, Simulated: q.Arch == "simulated"}, nil
}

// holdSetting requests a setting from the calling (locked) thread; release
// withdraws it and reports a failure to warn.
func holdSetting(host seam.Host, s timerinfo.Setting, warn func(string)) (granted timerinfo.Setting, release func(), err error) {
	granted, withdraw, err := host.Apply(s)
	if err != nil {
		return granted, nil, err
	}
	return granted, func() {
		if err := withdraw(); err != nil && warn != nil {
			warn(fmt.Sprintf("releasing %s: %v", s, err))
		}
	}, nil
}
