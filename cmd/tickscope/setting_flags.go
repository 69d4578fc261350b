package main

import (
	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/options"
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
			return options.BadFlag(name, f.Value, "a Windows setting; on %s use %s", q.OS, linuxAlternative(cmd))
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
			return options.BadFlag(name, f.Value, "a Linux setting; on %s use --resolution or --ms", q.OS)
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
// 100 ns units, checked against this machine's range (options.Period);
// exactly one of the two must have been given, and with neither the
// --resolution of 0 is refused.
func periodFlag(cmd *cobra.Command, resolution uint32, ms float64, win *timerinfo.Windows) (uint32, error) {
	msSet := cmd.Flags().Changed("ms")
	period, _, err := options.Period(resolution, cmd.Flags().Changed("resolution") || !msSet, ms, msSet, win)
	return period, err
}
