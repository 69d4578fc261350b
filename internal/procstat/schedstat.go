package procstat

import (
	"errors"
	"io/fs"
	"strconv"
	"strings"
)

// SchedStat is a thread's /proc/PID/task/TID/schedstat.
type SchedStat struct {
	// RunNS is the time it ran on a CPU; WaitNS the time it waited on a
	// run queue, runnable but not running; Slices the number of times it
	// was switched in.
	RunNS, WaitNS, Slices uint64
}

// ErrNoSchedInfo says that the kernel keeps no per-thread schedstat: it was
// built without CONFIG_SCHED_INFO, so the run-queue wait of a wait cannot
// be read.
var ErrNoSchedInfo = errors.New("procstat: no /proc/PID/task/TID/schedstat: this kernel was built without CONFIG_SCHED_INFO, so run-queue waits cannot be measured")

// ParseSchedStat parses a schedstat file: three unsigned decimal numbers
// separated by spaces, ending in a newline.
func ParseSchedStat(b []byte) (SchedStat, error) {
	f := strings.Fields(string(b))
	if len(f) != 3 {
		return SchedStat{}, &ParseError{File: "schedstat", Reason: "want 3 numbers, have " + strconv.Itoa(len(f))}
	}
	var v [3]uint64
	for i, s := range f {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return SchedStat{}, &ParseError{File: "schedstat", Reason: "field " + strconv.Itoa(i+1) + " " + strconv.Quote(s) + " is not an unsigned number"}
		}
		v[i] = n
	}
	return SchedStat{RunNS: v[0], WaitNS: v[1], Slices: v[2]}, nil
}

// SchedStatPath is where a thread's schedstat is, in an fs.FS rooted at /.
func SchedStatPath(tid int) string {
	return "proc/self/task/" + strconv.Itoa(tid) + "/schedstat"
}

// ReadSchedStat reads thread tid's schedstat (a thread of this process);
// ErrNoSchedInfo when the kernel has none.
func ReadSchedStat(fsys fs.FS, tid int) (SchedStat, error) {
	b, err := readFile(fsys, SchedStatPath(tid))
	if err != nil {
		if isNotExist(err) {
			// The thread's directory without the file is the kernel's
			// lack of CONFIG_SCHED_INFO; without the directory, no such
			// thread.
			if _, derr := fs.Stat(fsys, "proc/self/task/"+strconv.Itoa(tid)); derr == nil {
				return SchedStat{}, ErrNoSchedInfo
			}
		}
		return SchedStat{}, err
	}
	return ParseSchedStat(b)
}

// Sub is s-before: what the thread did between two reads. A counter that
// went backwards (not the same thread) gives ok false.
func (s SchedStat) Sub(before SchedStat) (d SchedStat, ok bool) {
	if s.RunNS < before.RunNS || s.WaitNS < before.WaitNS || s.Slices < before.Slices {
		return SchedStat{}, false
	}
	return SchedStat{RunNS: s.RunNS - before.RunNS, WaitNS: s.WaitNS - before.WaitNS, Slices: s.Slices - before.Slices}, true
}
