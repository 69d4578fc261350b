package procstat

import (
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

// IdleState is one cpuidle state of one CPU.
type IdleState struct {
	CPU, Index int
	Name       string
	// LatencyUS is the state's exit latency; TimeUS the time spent in it,
	// both in µs; Usage the number of times it was entered.
	LatencyUS, Usage, TimeUS uint64
}

// Idle is the cpuidle states of every CPU that has them.
type Idle struct {
	// Driver is cpuidle/current_driver ("none", "acpi_idle", "intel_idle",
	// "haltpoll"), or "" when the file is absent.
	Driver string
	// States, by CPU then index; empty when the kernel has no cpuidle
	// driver for these CPUs.
	States []IdleState
}

// ParseIdleState parses the four files of a stateK directory.
func ParseIdleState(cpu, index int, name, latency, usage, timeUS []byte) (IdleState, error) {
	s := IdleState{CPU: cpu, Index: index, Name: strings.TrimSpace(string(name))}
	if s.Name == "" || strings.ContainsAny(s.Name, "\n\x00") {
		return IdleState{}, &ParseError{File: idleDir(cpu, index) + "/name", Reason: "empty or not one line"}
	}
	for _, f := range []struct {
		file string
		b    []byte
		v    *uint64
	}{{"latency", latency, &s.LatencyUS}, {"usage", usage, &s.Usage}, {"time", timeUS, &s.TimeUS}} {
		w := strings.TrimSpace(string(f.b))
		n, err := strconv.ParseUint(w, 10, 64)
		if err != nil {
			return IdleState{}, &ParseError{File: idleDir(cpu, index) + "/" + f.file, Reason: strconv.Quote(w) + " is not an unsigned number"}
		}
		*f.v = n
	}
	return s, nil
}

func idleDir(cpu, index int) string {
	return "sys/devices/system/cpu/cpu" + strconv.Itoa(cpu) + "/cpuidle/state" + strconv.Itoa(index)
}

// ReadIdle reads every CPU's cpuidle states from an fs.FS rooted at /. A
// CPU without a cpuidle directory has no states; that is not an error.
func ReadIdle(fsys fs.FS) (Idle, error) {
	var id Idle
	if b, err := readFile(fsys, "sys/devices/system/cpu/cpuidle/current_driver"); err == nil {
		id.Driver = strings.TrimSpace(string(b))
	} else if !isNotExist(err) {
		return Idle{}, err
	}
	cpus, err := numbered(fsys, "sys/devices/system/cpu", "cpu")
	if err != nil {
		return Idle{}, err
	}
	for _, cpu := range cpus {
		dir := "sys/devices/system/cpu/cpu" + strconv.Itoa(cpu) + "/cpuidle"
		states, err := numbered(fsys, dir, "state")
		if err != nil {
			if isNotExist(err) {
				continue
			}
			return Idle{}, err
		}
		for _, k := range states {
			d := idleDir(cpu, k)
			var files [4][]byte
			for i, f := range []string{"name", "latency", "usage", "time"} {
				if files[i], err = readFile(fsys, d+"/"+f); err != nil {
					return Idle{}, err
				}
			}
			s, err := ParseIdleState(cpu, k, files[0], files[1], files[2], files[3])
			if err != nil {
				return Idle{}, err
			}
			id.States = append(id.States, s)
		}
	}
	return id, nil
}

// numbered lists the N of the entries PREFIXN of a directory, in order.
func numbered(fsys fs.FS, dir, prefix string) ([]int, error) {
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var ns []int
	for _, e := range ents {
		n, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		if v, err := strconv.Atoi(n); err == nil && v >= 0 && strconv.Itoa(v) == n {
			ns = append(ns, v)
		}
	}
	slices.Sort(ns)
	return ns, nil
}

// IdleDelta is one state's entries and time between two reads.
type IdleDelta struct {
	CPU, Index int
	Name       string
	LatencyUS  uint64
	Usage      uint64
	TimeUS     uint64
	// Reset is true when a counter went backwards (the CPU's driver was
	// reloaded): the delta is unknown and left 0.
	Reset bool
}

// DeltaIdle gives each state's delta, for the states both reads have with
// the same name.
func DeltaIdle(before, after Idle) []IdleDelta {
	type key struct{ cpu, index int }
	prev := map[key]IdleState{}
	for _, s := range before.States {
		prev[key{s.CPU, s.Index}] = s
	}
	var d []IdleDelta
	for _, a := range after.States {
		b, ok := prev[key{a.CPU, a.Index}]
		if !ok || b.Name != a.Name {
			continue
		}
		x := IdleDelta{CPU: a.CPU, Index: a.Index, Name: a.Name, LatencyUS: a.LatencyUS}
		if a.Usage < b.Usage || a.TimeUS < b.TimeUS {
			x.Reset = true
		} else {
			x.Usage, x.TimeUS = a.Usage-b.Usage, a.TimeUS-b.TimeUS
		}
		d = append(d, x)
	}
	return d
}
