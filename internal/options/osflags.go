package options

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/timerinfo"
)

// WindowsOnly rejects, with a usage error, any of the named flags given on
// a system that is not Windows, naming the Linux flags cmd has instead.
func WindowsOnly(cmd *cobra.Command, q *timerinfo.Report, flags ...string) error {
	if q.Windows != nil {
		return nil
	}
	for _, name := range flags {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			return BadFlag(name, f.Value, "a Windows setting; on %s use %s", q.OS, linuxAlternative(cmd))
		}
	}
	return nil
}

// LinuxOnly rejects the named flags anywhere but Linux.
func LinuxOnly(cmd *cobra.Command, q *timerinfo.Report, flags ...string) error {
	if q.Linux != nil {
		return nil
	}
	for _, name := range flags {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			return BadFlag(name, f.Value, "a Linux setting; on %s use --resolution or --ms", q.OS)
		}
	}
	return nil
}

// linuxAlternative names the Linux flags a command has, for WindowsOnly's
// message: apply's --slack sets another process's slack, so there it is
// named with the --pid it needs.
func linuxAlternative(cmd *cobra.Command) string {
	var names []string
	for _, name := range []string{"slack", "dma-latency"} {
		if cmd.Flags().Lookup(name) == nil {
			continue
		}
		if name == "slack" && cmd.Flags().Lookup("pid") != nil {
			names = append(names, "--pid PID --slack D")
		} else {
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

// PeriodFlag turns --resolution (100 ns units) or --ms into a period in
// 100 ns units, checked against this machine's range (Period); exactly one
// of the two must have been given, and with neither the --resolution of 0
// is refused.
func PeriodFlag(cmd *cobra.Command, resolution uint32, ms float64, win *timerinfo.Windows) (uint32, error) {
	msSet := cmd.Flags().Changed("ms")
	period, _, err := Period(resolution, cmd.Flags().Changed("resolution") || !msSet, ms, msSet, win)
	return period, err
}

// Setting checks a measurement's setting flags (--resolution or --ms on
// Windows, --slack on Linux) against the OS and its range, and returns
// the request; with none given, the request is nothing.
func Setting(cmd *cobra.Command, q *timerinfo.Report, resolution uint32, ms float64, slack time.Duration) (timerinfo.Setting, error) {
	var s timerinfo.Setting
	changed := cmd.Flags().Changed
	if changed("resolution") && changed("ms") {
		return s, bothPeriods(resolution, ms)
	}
	if err := WindowsOnly(cmd, q, "resolution", "ms"); err != nil {
		return s, err
	}
	if err := LinuxOnly(cmd, q, "slack"); err != nil {
		return s, err
	}
	if changed("slack") {
		if err := Slack("slack", slack, false); err != nil {
			return s, err
		}
		s.SlackNs = int64(slack)
	}
	if changed("resolution") || changed("ms") {
		period, err := PeriodFlag(cmd, resolution, ms, q.Windows)
		if err != nil {
			return s, err
		}
		s.Resolution100ns = period
	}
	return s, nil
}
