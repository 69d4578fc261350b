package sample_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/plantest"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
)

var linuxHost = plantest.Host{WaitMethods: []seam.Method{{Name: "clock-abs", Schedule: seam.Periodic}}}

// threadClockHost is a host that reads thread clocks, as Linux's and Windows'
// do.
type threadClockHost struct{ plantest.Host }

func (threadClockHost) ThreadCPU() (func() time.Duration, func(), error) {
	return func() time.Duration { return 0 }, func() {}, nil
}

// --load is checked before anything runs: on a host that reads no thread
// clocks (macOS) it is refused as not offered, exit 2, as it is on the
// model; 0 is no load, whatever the host.
func TestLoadRequest(t *testing.T) {
	const noCPUs = " and has no CPUs to load; --load measures this machine"
	one, zero := 1, 0
	for _, tc := range []struct {
		name     string
		host     seam.Host
		load     *int // nil: --load not given
		scenario string
		want     string
		loaded   bool
	}{
		{"none", &linuxHost, nil, "", "", false},
		{"one", &threadClockHost{linuxHost}, &one, "", "", true},
		{"no thread clocks", &linuxHost, &one, "", "--load 1: not offered on " + runtime.GOOS + ": " + sample.ErrNoThreadClock.Error(), false},
		{"0 without thread clocks", &linuxHost, &zero, "", "", false},
		{"the model", &threadClockHost{linuxHost}, &one, "narrow-band", "--load 1: the model of Windows timers (--simulate narrow-band) runs on a virtual clock" + noCPUs, false},
		{"0 on the model", &threadClockHost{linuxHost}, &zero, "narrow-band", "--load 0: the model of Windows timers (--simulate narrow-band) runs on a virtual clock" + noCPUs, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l sample.LoadRequest
			if tc.load != nil {
				l = sample.LoadRequest{Threads: *tc.load, Given: true}
			}
			got, load, err := l.Host(tc.host, tc.scenario)
			if plantest.Usage(t, err, tc.want); err != nil {
				return
			}
			if (load != nil) != tc.loaded || !tc.loaded && got != tc.host {
				t.Errorf("host %v, load %v; want loaded %v", got, load, tc.loaded)
			}
		})
	}
}
