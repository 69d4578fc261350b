package loopbench_test

import (
	"errors"
	"testing"

	"github.com/tickscope/tickscope/internal/loopbench"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// queryHost answers Query and nothing else.
type queryHost struct {
	seam.Host
	q   *timerinfo.Report
	err error
}

func (h queryHost) Query() (*timerinfo.Report, error) { return h.q, h.err }

// The loops' setting follows the host's query, not the OS the tool was
// built for: the model of Windows timers runs on Linux too.
func TestSetting(t *testing.T) {
	failed := errors.New("query failed")
	for _, tt := range []struct {
		name string
		h    queryHost
		want timerinfo.Setting
		err  error
	}{
		{"linux: slack 1 ns", queryHost{q: &timerinfo.Report{OS: "linux", Linux: &timerinfo.Linux{}}}, timerinfo.Setting{SlackNs: 1}, nil},
		{"windows: nothing", queryHost{q: &timerinfo.Report{OS: "windows", Windows: &timerinfo.Windows{}}}, timerinfo.Setting{}, nil},
		{"elsewhere: nothing", queryHost{q: &timerinfo.Report{OS: "darwin"}}, timerinfo.Setting{}, nil},
		{"a failed query", queryHost{err: failed}, timerinfo.Setting{}, failed},
	} {
		got, err := loopbench.Setting(tt.h)
		if !errors.Is(err, tt.err) || got != tt.want {
			t.Errorf("%s: %+v, %v; want %+v, %v", tt.name, got, err, tt.want, tt.err)
		}
	}
}
