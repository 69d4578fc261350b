package options_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

func TestBounds(t *testing.T) {
	win := &timerinfo.Windows{Finest100ns: 5000, Coarsest100ns: 156250}
	for _, tc := range []struct {
		name string
		err  error
		want string // "" for no error
	}{
		{"slack 1ns", options.Slack("slack", 1, false), ""},
		{"slack 1s", options.Slack("slack", time.Second, false), ""},
		{"slack 0 refused", options.Slack("slack", 0, false), "--slack 0s: allowed 1ns..1s (0 would reset the default)"},
		{"slack 0 restores", options.Slack("slack", 0, true), ""},
		{"slack negative", options.Slack("slack", -1, true), "--slack -1ns: allowed 0..1s (0 restores the process's default)"},
		{"slack over 1s", options.Slack("slack", time.Second+1, false), "--slack 1.000000001s: allowed 1ns..1s (0 would reset the default)"},
		{"dma 0", options.DMALatency("dma-latency", 0), ""},
		{"dma default", options.DMALatency("dma-latency", timerinfo.DMALatencyDefaultUs), ""},
		{"dma negative", options.DMALatency("dma-latency", -5), "--dma-latency -5: allowed 0..2000000000 µs"},
		{"delay 1ms", options.Delay("delay", time.Millisecond), ""},
		{"delay 0", options.Delay("delay", 0), "--delay 0s: allowed above 0 and at most 1s"},
		{"delay 2s", options.Delay("delay", 2*time.Second), "--delay 2s: allowed above 0 and at most 1s"},
		{"load 0", options.Load(0, 2, false, ""), ""},
		{"load 4 a CPU", options.Load(8, 2, true, ""), ""},
		{"load over 4 a CPU", options.Load(9, 2, true, ""), "--load 9: allowed 0..8 busy threads (4 per CPU; 2 CPUs here)"},
		{"load negative", options.Load(-1, 2, true, ""), "--load -1: allowed 0..8 busy threads (4 per CPU; 2 CPUs here)"},
		{"load on the model", options.Load(1, 2, true, "narrow-band"), "--load 1: the model of Windows timers (--simulate narrow-band) runs on a virtual clock and has no CPUs to load; --load measures this machine"},
		{"load 0 given on the model", options.Load(0, 2, true, "narrow-band"), "--load 0: the model of Windows timers (--simulate narrow-band) runs on a virtual clock and has no CPUs to load; --load measures this machine"},
		{"load not given on the model", options.Load(0, 2, false, "narrow-band"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkUsage(t, tc.err, tc.want)
		})
	}
	for _, tc := range []struct {
		name   string
		res    uint32
		resSet bool
		ms     float64
		msSet  bool
		period uint32
		ok     bool
		want   string
	}{
		{"neither", 0, false, 0, false, 0, false, ""},
		{"resolution", 5000, true, 0, false, 5000, true, ""},
		{"ms", 0, false, 0.5068, true, 5068, true, ""},
		{"both", 5000, true, 0.5, true, 0, false, "--resolution 5000 and --ms 0.5: give one of them, not both"},
		{"too fine", 4999, true, 0, false, 0, false, "--resolution 4999: allowed 5000..156250 (100 ns units), 0.5000..15.6250 ms on this machine"},
		{"ms too coarse", 0, false, 16, true, 0, false, "--ms 16: allowed 5000..156250 (100 ns units), 0.5000..15.6250 ms on this machine"},
		{"ms negative", 0, false, -1, true, 0, false, "--ms -1: allowed 5000..156250 (100 ns units), 0.5000..15.6250 ms on this machine"},
	} {
		t.Run("period "+tc.name, func(t *testing.T) {
			period, ok, err := options.Period(tc.res, tc.resSet, tc.ms, tc.msSet, win)
			checkUsage(t, err, tc.want)
			if period != tc.period || ok != tc.ok {
				t.Errorf("Period = %d, %v; want %d, %v", period, ok, tc.period, tc.ok)
			}
		})
	}
}

func checkUsage(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	var usage *options.UsageError
	if !errors.As(err, &usage) {
		t.Fatalf("error %v is not a usage error", err)
	}
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

// TestBound: a refusal of one option's value carries the option, the
// value and what is allowed, as its message says them; any other usage
// error carries none.
func TestBound(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want *options.Bound
	}{
		{"a bound", options.Slack("slack", 2*time.Second, true), &options.Bound{Option: "slack", Value: 2 * time.Second, Allowed: "allowed 0..1s (0 restores the process's default)"}},
		{"a type's refusal", func() error { _, err := options.ParseUint32("resolution", "0x10"); return err }(), &options.Bound{Option: "resolution", Value: "0x10", Allowed: "not a decimal integer: digits 0-9 and an optional minus sign (no leading zero, 0x, 0o, 0b, + or _)"}},
		{"an empty value", options.EmptyValue("while", "PROGRAM"), &options.Bound{Option: "while", Value: "", Allowed: "empty; it takes PROGRAM; leave it out for its default"}},
		{"two flags", options.Usagef("--resolution %d and --ms %v: give one of them, not both", 5000, 0.5), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var usage *options.UsageError
			if !errors.As(tt.err, &usage) {
				t.Fatalf("%v is not a usage error", tt.err)
			}
			if !reflect.DeepEqual(usage.Bound, tt.want) {
				t.Errorf("Bound = %+v, want %+v", usage.Bound, tt.want)
			}
		})
	}
}
