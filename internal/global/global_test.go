package global_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/sim/simtest"

	"github.com/tickscope/tickscope/internal/global"
	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// linuxHost is a seam.Host whose query is a Linux machine's; it measures
// nothing.
type linuxHost struct{ seam.Host }

func (h *linuxHost) Query() (*timerinfo.Report, error) { return simtest.LinuxReport(0), nil }

func wantError(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want one containing %q", err, want)
	}
}

func isUsage(err error) bool {
	var usage *options.UsageError
	return errors.As(err, &usage)
}

func TestVerifyGlobalVerdicts(t *testing.T) {
	ms := int64(time.Millisecond)
	tests := []struct {
		name        string
		scenario    string
		baseline    int64
		held        int64
		want        string
		wantChecked int
	}{
		{"global", "knee-26100", 15_600_000, 1_100_000, timerinfo.VerdictGlobal, 2},
		{"per-process", "knee-26100", 15_600_000, 15_500_000, timerinfo.VerdictPerProcess, 2},
		{"in between", "knee-26100", 15_600_000, 9 * ms, timerinfo.VerdictInconclusive, 2},
		{"timer not at rest", "contaminated", 0, 0, timerinfo.VerdictInconclusive, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys := &sim.System{}
			h := simtest.NewWindows(t, tt.scenario)
			measured := 0
			child := func(context.Context) (int64, error) {
				measured++
				if measured == 1 {
					if h.Observe().Current100ns != 156250 {
						t.Error("the baseline was measured with a request held")
					}
					return tt.baseline, nil
				}
				if h.Observe().Current100ns >= 156250 {
					t.Errorf("the second measurement ran at %d, not while the finest period was held", h.Observe().Current100ns)
				}
				return tt.held, nil
			}
			res, err := global.VerifyGlobal(context.Background(), h, sys, child)
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != tt.want || measured != tt.wantChecked {
				t.Errorf("verdict %q after %d measurements (%s), want %q after %d", res.Verdict, measured, res.Reason, tt.want, tt.wantChecked)
			}
			if h.Observe().Current100ns != 156250 && tt.scenario == "knee-26100" {
				t.Error("the request was not released")
			}
			if len(sys.Locks) != 0 {
				t.Errorf("locks still held: %v", sys.Locks)
			}
		})
	}
	sys := &sim.System{Locks: map[string]int{seam.BenchLock: 99}}
	_, err := global.VerifyGlobal(context.Background(), simtest.NewWindows(t, "knee-26100"), sys, nil)
	var locked *seam.LockedError
	if !errors.As(err, &locked) || locked.PID != 99 {
		t.Errorf("with a bench running: %v, want a LockedError naming 99", err)
	}
	res, err := global.VerifyGlobal(context.Background(), &linuxHost{}, &sim.System{}, nil)
	if err != nil || res.Verdict != global.VerdictNotApplicable || res.Reason != global.LinuxGlobalText {
		t.Errorf("Linux: %+v, %v", res, err)
	}
}

func TestSetGlobal(t *testing.T) {
	tests := []struct {
		name        string
		build       uint32
		before      *uint32
		elevated    bool
		on          bool
		wantErr     string
		wantChanged bool
		wantUndo    string
		wantWarning bool
	}{
		{"on", 26100, nil, true, true, "", true, "tickscope global off", false},
		{"on again changes nothing, needs no elevation", 26100, simtest.One(), false, true, "", false, "", false},
		{"off", 26100, simtest.One(), true, false, "", true, "tickscope global on", false},
		{"off again", 26100, nil, false, false, "", false, "", false},
		{"needs elevation", 26100, nil, false, true, "needs elevation: run from an elevated terminal (nothing was changed)", false, "", false},
		{"Windows 10 ignores it", 19045, nil, true, true, "", true, "tickscope global off", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := simtest.NewWindows(t, "knee-26100")
			h.Build = tt.build
			sys := &sim.System{IsElevated: tt.elevated, Global: tt.before}
			res, err := global.SetGlobal(simtest.Query(t, h), sys, tt.on)
			if tt.wantErr != "" {
				wantError(t, err, tt.wantErr)
				if sys.GlobalWrites != 0 {
					t.Error("a refusal wrote the value")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Changed != tt.wantChanged || res.Undo != tt.wantUndo || (res.Warning != "") != tt.wantWarning {
				t.Errorf("SetGlobal = %+v", res)
			}
			if (sys.GlobalWrites == 1) != tt.wantChanged {
				t.Errorf("%d writes", sys.GlobalWrites)
			}
			if got := res.After != nil && *res.After == 1; got != tt.on {
				t.Errorf("after: %v", res.After)
			}
		})
	}
	if _, err := global.SetGlobal(simtest.LinuxReport(0), &sim.System{}, true); !isUsage(err) {
		t.Errorf("Linux: %v, want a usage error", err)
	}
}

func TestText(t *testing.T) {
	one := uint32(1)
	tests := []struct {
		name  string
		write func(*bytes.Buffer)
		want  string
	}{
		{"global already on", func(b *bytes.Buffer) { global.WriteGlobal(b, &global.GlobalResult{Key: "K", After: &one}) },
			"K is already 1; nothing was changed\n"},
		{"global off", func(b *bytes.Buffer) {
			global.WriteGlobal(b, &global.GlobalResult{Key: "K", Before: &one, Changed: true, RequestModel: "m", Undo: "tickscope global on"})
		}, "removed K (it was 1)\nit takes effect after a reboot\nafter the reboot: m\nundo: tickscope global on\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		tt.write(&b)
		if b.String() != tt.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tt.name, b.String(), tt.want)
		}
	}
}
