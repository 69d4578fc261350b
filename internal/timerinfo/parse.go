package timerinfo

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// NoHZFromConfig reads the tick mode from a kernel build configuration:
// "full", "idle", "periodic", or "unknown" when config is empty or silent.
func NoHZFromConfig(config []byte) string {
	opts := configOptions(config)
	switch {
	case opts["CONFIG_NO_HZ_FULL"] == "y":
		return "full"
	case opts["CONFIG_NO_HZ_IDLE"] == "y":
		return "idle"
	case opts["CONFIG_HZ_PERIODIC"] == "y":
		return "periodic"
	}
	return "unknown"
}

// PreemptionModel names the kernel's preemption model from `uname -v` and,
// where readable, its configuration: PREEMPT_RT, PREEMPT_DYNAMIC, PREEMPT,
// PREEMPT_VOLUNTARY, PREEMPT_NONE, or "unknown".
func PreemptionModel(unameVersion string, config []byte) string {
	words := strings.Fields(unameVersion)
	has := func(w string) bool {
		for _, x := range words {
			if x == w {
				return true
			}
		}
		return false
	}
	// uname -v names PREEMPT_RT, PREEMPT_DYNAMIC and PREEMPT kernels.
	for _, w := range []string{"PREEMPT_RT", "PREEMPT_DYNAMIC", "PREEMPT"} {
		if has(w) {
			return w
		}
	}
	opts := configOptions(config)
	for _, o := range []string{"PREEMPT_RT", "PREEMPT_DYNAMIC", "PREEMPT", "PREEMPT_VOLUNTARY", "PREEMPT_NONE"} {
		if opts["CONFIG_"+o] == "y" {
			return o
		}
	}
	return "unknown"
}

// configOptions parses "CONFIG_X=value" lines, ignoring comments.
func configOptions(config []byte) map[string]string {
	opts := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(config))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if k, v, ok := strings.Cut(line, "="); ok && strings.HasPrefix(k, "CONFIG_") {
			opts[k] = v
		}
	}
	return opts
}

// MaxCPU is the highest CPU number ParseCPUList takes (the kernel's
// NR_CPUS is at most 8,192).
const MaxCPU = 65535

// ParseCPUList reads a kernel CPU list such as "0-3,8,10-11" (the form
// of /sys/devices/system/cpu/online), giving its CPUs in its order.
func ParseCPUList(list string) ([]int, error) {
	list = strings.TrimSpace(list)
	if list == "" {
		return nil, fmt.Errorf("empty CPU list")
	}
	var cpus []int
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 || a > MaxCPU {
			return nil, fmt.Errorf("bad CPU list %q", list)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b > MaxCPU {
				return nil, fmt.Errorf("bad CPU list %q", list)
			}
		}
		if len(cpus)+b-a+1 > MaxCPU+1 {
			return nil, fmt.Errorf("CPU list %q: more than %d CPUs", list, MaxCPU+1)
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// FormatCPUList writes cpus in the kernel's CPU-list form that
// ParseCPUList reads, a run of consecutive CPUs as a range: 0, 2, 3, 4, 7
// is "0,2-4,7", as taskset -c takes it.
func FormatCPUList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}

// CountCPUList counts the CPUs in a kernel CPU list (ParseCPUList).
func CountCPUList(list string) (int, error) {
	cpus, err := ParseCPUList(list)
	return len(cpus), err
}

// BootTimerSettings are the timer-related entries of `bcdedit /enum
// {current}`: "yes", "no", or "default" when the entry is not set.
type BootTimerSettings struct {
	DisableDynamicTick string
	UsePlatformTick    string
	UsePlatformClock   string
}

// CheckBCDEditOutput accepts the output of a `bcdedit /enum {current}` that
// exited 0 when it shows the entry it was asked for. It looks for the
// identifier's value, {current}, which bcdedit prints as is in every UI
// language, and never for a label: "identifier" is translated on localised
// Windows ("Bezeichner" in German), so looking for it refused every
// non-English machine's settings.
func CheckBCDEditOutput(out string) error {
	if !strings.Contains(strings.ToLower(out), "{current}") {
		return fmt.Errorf("bcdedit's output names no {current} entry")
	}
	return nil
}

// ParseBCDEdit reads the timer entries from `bcdedit /enum {current}`
// output. Entry names are matched case-insensitively; values are Yes/No
// (bcdedit prints them in English whatever the UI language).
func ParseBCDEdit(out string) BootTimerSettings {
	s := BootTimerSettings{DisableDynamicTick: "default", UsePlatformTick: "default", UsePlatformClock: "default"}
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		var value string
		switch strings.ToLower(fields[1]) {
		case "yes", "on", "true", "1":
			value = "yes"
		case "no", "off", "false", "0":
			value = "no"
		default:
			// bcdedit prints booleans in the display language (German
			// "Ja"/"Nein"): a setting that is present with a value this
			// parser does not know is reported as such, never as "default".
			value = "unknown (" + fields[1] + ")"
		}
		switch strings.ToLower(fields[0]) {
		case "disabledynamictick":
			s.DisableDynamicTick = value
		case "useplatformtick":
			s.UsePlatformTick = value
		case "useplatformclock":
			s.UsePlatformClock = value
		}
	}
	return s
}
