// Package cpushare reads a process's CPU time from /proc (Linux), for
// the tools that measure what a holder costs: utime + stime of
// /proc/PID/stat, in clock ticks, and the sum of its threads'
// /proc/PID/task/TID/schedstat run time, in ns.
package cpushare

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ClockTicks is CLK_TCK, the unit of /proc/PID/stat's utime and stime,
// on every Linux the tools run on (sysconf(_SC_CLK_TCK)).
const ClockTicks = 100

// Time is a process's CPU time: utime + stime in clock ticks, and its
// threads' run time in ns.
type Time struct{ Ticks, Ns int64 }

// Sub is the CPU time from before to t. The run time is a sum over the
// threads alive at each read: a thread that ended between the two drops
// out of t's sum with all it ran, so the difference under-counts, and
// where it would be negative it is 0. The ticks are the process's own,
// which keep its ended threads' time.
func (t Time) Sub(before Time) Time {
	return Time{t.Ticks - before.Ticks, max(t.Ns-before.Ns, 0)}
}

// Share is the run time's share of one core over span, in per cent.
func (t Time) Share(span time.Duration) float64 { return 100 * float64(t.Ns) / float64(span) }

// Read reads the CPU time of the process pid.
func Read(pid int) (Time, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Time{}, err
	}
	// The fields after the command name (in parentheses, which may hold
	// spaces): utime and stime are the 14th and 15th of the line.
	end := strings.LastIndexByte(string(data), ')')
	if end < 0 || end+2 > len(data) {
		return Time{}, fmt.Errorf("/proc/%d/stat has no (comm)", pid)
	}
	f := strings.Fields(string(data[end+2:]))
	if len(f) < 13 {
		return Time{}, fmt.Errorf("/proc/%d/stat has %d fields after comm", pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return Time{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return Time{}, err
	}
	t := Time{Ticks: utime + stime}
	for _, task := range tasks {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, task.Name()))
		if err != nil {
			continue // the thread ended
		}
		run, err := strconv.ParseInt(strings.Fields(string(data))[0], 10, 64)
		if err != nil {
			return Time{}, err
		}
		t.Ns += run
	}
	return t, nil
}
