package procstat

import (
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

// UserHZ is the unit of /proc/stat's times: USER_HZ, 100 ticks a second
// on every architecture Linux runs tickscope on (x86-64, arm64), whatever
// the kernel's own HZ.
const UserHZ = 100

// CPUTime is a cpuN line of /proc/stat.
type CPUTime struct {
	CPU int
	// Ticks are the line's columns in USER_HZ ticks: user, nice, system,
	// idle, iowait, irq, softirq, steal, guest, guest_nice; as many as this
	// kernel prints.
	Ticks []uint64
}

// Steal is the steal column, and whether the kernel prints one (2.6.11
// on).
func (c CPUTime) Steal() (uint64, bool) {
	if len(c.Ticks) < 8 {
		return 0, false
	}
	return c.Ticks[7], true
}

// Stat is the per-CPU part of /proc/stat: the online CPUs, in order.
type Stat struct {
	CPUs []CPUTime
}

// CPU finds a CPU's line.
func (s Stat) CPU(cpu int) (CPUTime, bool) {
	for _, c := range s.CPUs {
		if c.CPU == cpu {
			return c, true
		}
	}
	return CPUTime{}, false
}

// ParseStat parses the cpuN lines of /proc/stat (the summed "cpu" line and
// the other lines are skipped).
func ParseStat(b []byte) (Stat, error) {
	var s Stat
	for i, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		n := f[0][3:]
		cpu, err := strconv.Atoi(n)
		if err != nil || cpu < 0 || n != strconv.Itoa(cpu) {
			return Stat{}, &ParseError{File: "stat", Line: i + 1, Reason: strconv.Quote(f[0]) + " is not cpuN"}
		}
		if len(f) < 5 {
			return Stat{}, &ParseError{File: "stat", Line: i + 1, Reason: "fewer than 4 times"}
		}
		if len(s.CPUs) > 0 && cpu <= s.CPUs[len(s.CPUs)-1].CPU {
			return Stat{}, &ParseError{File: "stat", Line: i + 1, Reason: f[0] + " out of order"}
		}
		c := CPUTime{CPU: cpu}
		for _, w := range f[1:] {
			v, err := strconv.ParseUint(w, 10, 64)
			if err != nil {
				return Stat{}, &ParseError{File: "stat", Line: i + 1, Reason: strconv.Quote(w) + " is not an unsigned number"}
			}
			c.Ticks = append(c.Ticks, v)
		}
		s.CPUs = append(s.CPUs, c)
	}
	if len(s.CPUs) == 0 {
		return Stat{}, &ParseError{File: "stat", Reason: "no cpuN line"}
	}
	return s, nil
}

// ReadStat reads /proc/stat from an fs.FS rooted at /.
func ReadStat(fsys fs.FS) (Stat, error) {
	b, err := readFile(fsys, "proc/stat")
	if err != nil {
		return Stat{}, err
	}
	return ParseStat(b)
}

// StealDelta is one CPU's steal between two reads of /proc/stat.
type StealDelta struct {
	CPU int
	// Ticks is the steal in USER_HZ ticks; NS the same in nanoseconds.
	Ticks uint64
	NS    int64
	// Known is false when either read lacks the column, or it went
	// backwards (Reset).
	Known, Reset bool
}

// DeltaSteal gives each CPU's steal between two reads, for the CPUs online
// in both; Gone and Came are those online in only one.
func DeltaSteal(before, after Stat) (d []StealDelta, gone, came []int) {
	for _, a := range after.CPUs {
		b, ok := before.CPU(a.CPU)
		if !ok {
			came = append(came, a.CPU)
			continue
		}
		sd := StealDelta{CPU: a.CPU}
		sa, oka := a.Steal()
		sb, okb := b.Steal()
		switch {
		case !oka || !okb:
		case sa < sb:
			sd.Reset = true
		default:
			sd.Known, sd.Ticks, sd.NS = true, sa-sb, int64(sa-sb)*(1e9/UserHZ)
		}
		d = append(d, sd)
	}
	for _, b := range before.CPUs {
		if !slices.ContainsFunc(after.CPUs, func(c CPUTime) bool { return c.CPU == b.CPU }) {
			gone = append(gone, b.CPU)
		}
	}
	return d, gone, came
}
