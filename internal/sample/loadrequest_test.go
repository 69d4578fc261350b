package sample_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
)

// methodsHost offers methods and nothing else.
type methodsHost struct {
	seam.Host
	methods []seam.Method
}

func (h methodsHost) Methods() []seam.Method { return h.methods }

var linuxHost = methodsHost{methods: []seam.Method{{Name: "clock-abs", Schedule: seam.Periodic}}}

// threadClockHost is a host that reads thread clocks, as Linux's and Windows'
// do.
type threadClockHost struct{ methodsHost }

func (threadClockHost) ThreadCPU() (func() time.Duration, func(), error) {
	return func() time.Duration { return 0 }, func() {}, nil
}

// --load is checked before anything runs: on a host that reads no thread
// clocks (macOS) it is refused as not offered, exit 2, as it is on the
// model; 0 is no load, whatever the host.
func TestLoadRequest(t *testing.T) {
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
		{"no thread clocks", &linuxHost, &one, "", "--load 1: not offered on ", false},
		{"0 without thread clocks", &linuxHost, &zero, "", "", false},
		{"the model", &threadClockHost{linuxHost}, &one, "narrow-band", "--load 1: the model of Windows timers (--simulate narrow-band) runs on a virtual clock", false},
		{"0 on the model", &threadClockHost{linuxHost}, &zero, "narrow-band", "--load 0: the model of Windows timers (--simulate narrow-band) runs on a virtual clock", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l sample.LoadRequest
			if tc.load != nil {
				l = sample.LoadRequest{Threads: *tc.load, Given: true}
			}
			got, load, err := l.Host(tc.host, tc.scenario)
			var u *options.UsageError
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tc.want != "" && (!errors.As(err, &u) || !strings.HasPrefix(err.Error(), tc.want)):
				t.Fatalf("err = %v, want a usage error starting %q", err, tc.want)
			case tc.want != "":
				return
			}
			if (load != nil) != tc.loaded || !tc.loaded && got != tc.host {
				t.Errorf("host %v, load %v; want loaded %v", got, load, tc.loaded)
			}
		})
	}
}
