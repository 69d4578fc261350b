package main

import (
	"math"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/timerinfo"
)

// windowsOnly rejects, with a usage error, any of the named flags given on
// a system that is not Windows.
func windowsOnly(cmd *cobra.Command, q *timerinfo.Report, flags ...string) error {
	if q.Windows != nil {
		return nil
	}
	for _, name := range flags {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			return badFlag(name, f.Value, "a Windows setting; on %s use %s", runtime.GOOS, linuxAlternative(cmd))
		}
	}
	return nil
}

// linuxOnly rejects the named flags anywhere but Linux.
func linuxOnly(cmd *cobra.Command, q *timerinfo.Report, flags ...string) error {
	if q.Linux != nil {
		return nil
	}
	for _, name := range flags {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			return badFlag(name, f.Value, "a Linux setting; on %s use --resolution or --ms", runtime.GOOS)
		}
	}
	return nil
}

// linuxAlternative names the Linux flags a command has, for windowsOnly's
// message.
func linuxAlternative(cmd *cobra.Command) string {
	var names []string
	for _, name := range []string{"slack", "dma-latency"} {
		if cmd.Flags().Lookup(name) != nil {
			names = append(names, "--"+name)
		}
	}
	switch len(names) {
	case 0:
		return "no timer-period flag (Linux has no timer-period request)"
	case 1:
		return names[0]
	}
	return names[0] + " or " + names[1]
}

// periodFlag turns --resolution (100 ns units) or --ms into a period in
// 100 ns units, checked against this machine's range; exactly one of the
// two must have been given.
func periodFlag(cmd *cobra.Command, resolution uint32, ms float64, win *timerinfo.Windows) (uint32, error) {
	resSet, msSet := cmd.Flags().Changed("resolution"), cmd.Flags().Changed("ms")
	if resSet && msSet {
		return 0, usagef("--resolution %d and --ms %v: give one of them, not both", resolution, ms)
	}
	flag, value, period := "resolution", any(resolution), resolution
	if msSet {
		flag, value = "ms", ms
		units := math.Round(ms * 10_000)
		if math.IsNaN(units) || units < 0 || units > math.MaxUint32 {
			units = 0
		}
		period = uint32(units)
	}
	if period < win.Finest100ns || period > win.Coarsest100ns {
		return 0, badFlag(flag, value, "allowed %d..%d (100 ns units), %s..%s ms on this machine",
			win.Finest100ns, win.Coarsest100ns, timerinfo.FormatPeriodMS(win.Finest100ns), timerinfo.FormatPeriodMS(win.Coarsest100ns))
	}
	return period, nil
}
