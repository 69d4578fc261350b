// Package options defines, once, what tickscope accepts on its command line:
// the bounds of every setting and delay, and the usage error that names the
// flag, the value and what is allowed. The commands and package hold check
// their input here, so that a bound written twice cannot drift.
package options

import (
	"fmt"
	"math"
	"time"

	"github.com/tickscope/tickscope/internal/timerinfo"
)

// UsageError is bad input: tickscope exits 2 and has measured and changed
// nothing.
type UsageError struct {
	Msg string
	// Bound is what was refused when the error is one option's value
	// outside what it allows (BadFlag's); nil for every other usage
	// error.
	Bound *Bound
}

func (e *UsageError) Error() string { return e.Msg }

// Bound is one option's value refused, in parts, for a caller that
// points at the option rather than print the message: the dashboard
// marks the form's field of that name.
type Bound struct {
	// Option is the option's name: its flag without the dashes, which is
	// also the name of the dashboard's form field for it.
	Option string
	// Value is the value refused, as it was given.
	Value any
	// Allowed is what the option allows, as the message words it.
	Allowed string
}

// BadFlag reports an invalid flag value in one line: the flag, the value
// (echoed as Value does: quoted where needed, shortened) and what is
// allowed. The error's Bound holds the three.
func BadFlag(flag string, value any, allowed string, args ...any) error {
	b := &Bound{Option: flag, Value: value, Allowed: fmt.Sprintf(allowed, shortArgs(args)...)}
	return &UsageError{Msg: OneLine(fmt.Sprintf("--%s %s: %s", flag, Value(value), b.Allowed)), Bound: b}
}

// Usagef is any other usage error, in one line. Its string arguments may
// be values the user typed: each longer than a message needs is shortened
// (the format decides whether to quote it, with %q). BadFlag's allowed
// text is treated the same way; the lists of names it holds are shorter.
func Usagef(format string, args ...any) error {
	return &UsageError{Msg: OneLine(fmt.Sprintf(format, shortArgs(args)...))}
}

// shortArgs shortens the string arguments of a message.
func shortArgs(args []any) []any {
	out := make([]any, len(args))
	for i, arg := range args {
		if s, ok := arg.(string); ok {
			short, n := shortenTo(s, maxMessage)
			if n > maxMessage {
				short += fmt.Sprintf(" (%d characters)", n)
			}
			arg = short
		}
		out[i] = arg
	}
	return out
}

// Bounds of the command line.
const (
	// MaxDelay is the longest wait any command measures.
	MaxDelay = time.Second
	// MaxSlack is the largest timer slack tickscope sets.
	MaxSlack = time.Second
)

// MaxLoadPerCPU bounds --load to this many busy threads per CPU: four
// always-runnable threads on every CPU is more than a desktop keeps busy,
// and the bound keeps a mistyped count from starting thousands of
// threads. A raw file holds a load within it too.
const MaxLoadPerCPU = 4

// Load checks --load, the busy threads run beside a measurement, against
// the cpus of this machine. The model of Windows timers refuses it, given
// at all (--load 0 too, as every flag that does nothing is refused): it
// runs on a virtual clock, with no CPUs to load.
func Load(threads, cpus int, given bool, scenario string) error {
	switch {
	case given && scenario != "":
		return BadFlag("load", threads, "the model of Windows timers (--simulate %s) runs on a virtual clock and has no CPUs to load; --load measures this machine", scenario)
	case threads < 0 || threads > MaxLoadPerCPU*cpus:
		return BadFlag("load", threads, "allowed 0..%d busy threads (%d per CPU; %d CPUs here)", MaxLoadPerCPU*cpus, MaxLoadPerCPU, cpus)
	}
	return nil
}

// LoadUsage is --load's help.
var LoadUsage = fmt.Sprintf("keep this many busy threads (each a CPU-bound loop, unpinned) running beside the measurement: 0..%d per CPU", MaxLoadPerCPU)

// Slack checks a timer slack flag. Setting another process's slack
// (apply --pid) takes 0 to restore that process's default; everywhere else
// 0 would silently mean "the default", so it is refused.
func Slack(flag string, d time.Duration, zeroRestoresDefault bool) error {
	switch {
	case zeroRestoresDefault && (d < 0 || d > MaxSlack):
		return BadFlag(flag, d, "allowed 0..%v (0 restores the process's default)", MaxSlack)
	case !zeroRestoresDefault && (d < 1 || d > MaxSlack):
		return BadFlag(flag, d, "allowed 1ns..%v (0 would reset the default)", MaxSlack)
	}
	return nil
}

// DMALatency checks a /dev/cpu_dma_latency request in µs.
func DMALatency(flag string, us int32) error {
	if us < 0 || us > timerinfo.DMALatencyDefaultUs {
		return BadFlag(flag, us, "allowed 0..%d µs", timerinfo.DMALatencyDefaultUs)
	}
	return nil
}

// Delay checks a wait's delay.
func Delay(flag string, d time.Duration) error {
	if d <= 0 || d > MaxDelay {
		return BadFlag(flag, d, "allowed above 0 and at most %v", MaxDelay)
	}
	return nil
}

// bothPeriods refuses --resolution and --ms given together.
func bothPeriods(resolution uint32, ms float64) error {
	return Usagef("--resolution %d and --ms %v: give one of them, not both", resolution, ms)
}

// Period turns --resolution (100 ns units) or --ms into a timer period in
// 100 ns units, checked against this machine's range. At most one of the
// two may be given; ok is false when neither was.
func Period(resolution uint32, resolutionSet bool, ms float64, msSet bool, win *timerinfo.Windows) (period uint32, ok bool, err error) {
	switch {
	case resolutionSet && msSet:
		return 0, false, bothPeriods(resolution, ms)
	case !resolutionSet && !msSet:
		return 0, false, nil
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
		return 0, false, BadFlag(flag, value, "allowed %d..%d (100 ns units), %s..%s ms on this machine",
			win.Finest100ns, win.Coarsest100ns, timerinfo.FormatPeriodMS(win.Finest100ns), timerinfo.FormatPeriodMS(win.Coarsest100ns))
	}
	return period, true, nil
}
