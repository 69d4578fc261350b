package sweep

import (
	"fmt"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/rawfile"
)

// NotRunning is what a run saw of the process not running at all (a
// job-control stop, a suspend of the machine) across the points it
// judged: those samples are left out of every figure and gate, for their
// lateness is not the timer's (rawfile.Point.Running).
type NotRunning struct {
	// LeftOut is how many samples were left out.
	LeftOut int `json:"left_out"`
	// Continued is how many times the process was continued after a stop
	// (SIGCONT received), warm-up included.
	Continued int `json:"continued"`
	// SuspendedNs is how long the machine was suspended across the waits.
	SuspendedNs int64 `json:"suspended_ns"`
}

// NotRunningOf adds up what the points saw of the process not running;
// nil when it ran throughout.
func NotRunningOf(points []rawfile.Point) *NotRunning {
	var out *NotRunning
	for i := range points {
		nr := points[i].NotRunning
		if nr == nil {
			continue
		}
		if out == nil {
			out = &NotRunning{}
		}
		out.LeftOut += len(nr.Samples)
		out.Continued += nr.Continued
		out.SuspendedNs += nr.SuspendedNs
	}
	return out
}

// Sentence says what nr left out and why, for a warning.
func (nr *NotRunning) Sentence() string {
	var why []string
	if nr.Continued > 0 {
		why = append(why, "stopped and continued "+times(nr.Continued))
	}
	if nr.SuspendedNs > 0 {
		why = append(why, fmt.Sprintf("the machine suspended for %s", time.Duration(nr.SuspendedNs).Round(time.Millisecond)))
	}
	what := "no sample was"
	switch nr.LeftOut {
	case 0:
	case 1:
		what = "1 sample was"
	default:
		what = fmt.Sprintf("%d samples were", nr.LeftOut)
	}
	s := fmt.Sprintf("the process was not running while it measured (%s): %s taken then", strings.Join(why, "; "), what)
	if nr.LeftOut > 0 {
		s += " and left out of the figures, for their lateness is not the timer's"
	}
	return s
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// addNotRunning adds a chunk's not_running to its point's, of which the
// chunk's samples are to follow the first offset: the chunk's indexes
// move by offset, and only those under limit (the samples kept) stay.
func addNotRunning(p *rawfile.Point, chunk *rawfile.NotRunning, offset, limit int) {
	if chunk == nil {
		return
	}
	if p.NotRunning == nil {
		p.NotRunning = &rawfile.NotRunning{}
	}
	nr := p.NotRunning
	for _, i := range chunk.Samples {
		if offset+i < limit {
			nr.Samples = append(nr.Samples, offset+i)
		}
	}
	nr.Continued += chunk.Continued
	nr.SuspendedNs += chunk.SuspendedNs
}
