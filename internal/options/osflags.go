package options

import (
	"time"

	"github.com/tickscope/tickscope/internal/timerinfo"
)

// Flag is one flag of a command as it was given: its name, its value, and
// whether it was given at all.
type Flag struct {
	Name  string
	Value any
	Given bool
}

// WindowsOnly rejects, with a usage error, the first of flags given on a
// system that is not Windows, naming instead, the Linux flags the command
// has in their place (Instead).
func WindowsOnly(q *timerinfo.Report, instead string, flags ...Flag) error {
	if q.Windows != nil {
		return nil
	}
	for _, f := range flags {
		if f.Given {
			return BadFlag(f.Name, f.Value, "a Windows setting; on %s use %s", q.OS, instead)
		}
	}
	return nil
}

// LinuxOnly rejects the first of flags given anywhere but Linux.
func LinuxOnly(q *timerinfo.Report, flags ...Flag) error {
	if q.Linux != nil {
		return nil
	}
	for _, f := range flags {
		if f.Given {
			return BadFlag(f.Name, f.Value, "a Linux setting; on %s use --resolution or --ms", q.OS)
		}
	}
	return nil
}

// Instead names, for WindowsOnly's message, the Linux flags a command has
// in place of the Windows ones (as they are typed: apply's is
// "--pid PID --slack D", the --slack that needs a --pid).
func Instead(flags ...string) string {
	switch len(flags) {
	case 0:
		return "no timer-period flag (Linux has no timer-period request)"
	case 1:
		return flags[0]
	}
	return flags[0] + " or " + flags[1]
}

// SettingFlags are a measurement's setting flags: --resolution or --ms
// (Windows), --slack (Linux), each with whether it was given.
type SettingFlags struct {
	Resolution    uint32
	ResolutionSet bool
	MS            float64
	MSSet         bool
	Slack         time.Duration
	SlackSet      bool
}

// Setting checks a measurement's setting flags against the OS q describes
// and its range, and returns the request; with none given, the request is
// nothing.
func Setting(q *timerinfo.Report, f SettingFlags) (timerinfo.Setting, error) {
	var s timerinfo.Setting
	if f.ResolutionSet && f.MSSet {
		return s, bothPeriods(f.Resolution, f.MS)
	}
	if err := WindowsOnly(q, Instead("--slack"), Flag{"resolution", f.Resolution, f.ResolutionSet}, Flag{"ms", f.MS, f.MSSet}); err != nil {
		return s, err
	}
	if err := LinuxOnly(q, Flag{"slack", f.Slack, f.SlackSet}); err != nil {
		return s, err
	}
	if f.SlackSet {
		if err := Slack("slack", f.Slack, false); err != nil {
			return s, err
		}
		s.SlackNs = int64(f.Slack)
	}
	if f.ResolutionSet || f.MSSet {
		period, _, err := Period(f.Resolution, f.ResolutionSet, f.MS, f.MSSet, q.Windows)
		if err != nil {
			return s, err
		}
		s.Resolution100ns = period
	}
	return s, nil
}
