package who

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// DMALatencyDevice is the PM QoS device whose open file descriptors are
// requests.
const DMALatencyDevice = "/dev/cpu_dma_latency"

// Scheduling policies as /proc/PID/stat's policy field gives them
// (include/uapi/linux/sched.h).
const (
	schedFIFO = 1
	schedRR   = 2
)

// pfKthread is PF_KTHREAD in /proc/PID/stat's flags field
// (include/linux/sched.h; proc_pid_stat(5)).
const pfKthread = 0x00200000

// Stat is what tickscope reads from /proc/PID/stat or
// /proc/PID/task/TID/stat.
type Stat struct {
	// Name is the comm, between the first "(" and the last ")": it may hold
	// spaces and parentheses itself. Any process names itself, any bytes
	// but NUL: Name holds them as they are, and output escapes them where
	// it shows them (printable.Line in text; JSON carries the name).
	Name         string
	KernelThread bool
	// Policy and RTPriority are fields 41 and 40 (Linux 2.5.19+); -1 when
	// the line is too short to carry them.
	Policy, RTPriority int
}

// ParseStat parses the text of a stat file. Fields are counted after the
// last ")", where field 3 (the state) starts.
func ParseStat(stat string) (Stat, error) {
	open, end := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return Stat{}, errors.New("no (comm)")
	}
	fields := strings.Fields(stat[end+1:])
	field := func(n int) (int64, bool) { // n is proc_pid_stat(5)'s 1-based number
		if n-3 >= len(fields) {
			return 0, false
		}
		v, err := strconv.ParseInt(fields[n-3], 10, 64)
		return v, err == nil
	}
	flags, ok := field(9)
	if !ok {
		return Stat{}, errors.New("no flags (field 9)")
	}
	s := Stat{Name: stat[open+1 : end], KernelThread: uint64(flags)&pfKthread != 0, Policy: -1, RTPriority: -1}
	if rt, ok := field(40); ok {
		s.RTPriority = int(rt)
	}
	if policy, ok := field(41); ok {
		s.Policy = int(policy)
	}
	return s, nil
}

// PolicyName names a real-time scheduling policy, "" for the others.
func PolicyName(policy int) string {
	switch policy {
	case schedFIFO:
		return "SCHED_FIFO"
	case schedRR:
		return "SCHED_RR"
	}
	return ""
}

// DMALatency is the /dev/cpu_dma_latency value in force, as the platform
// read it: Us, or why it could not (it needs root).
type DMALatency struct {
	Us  *int32
	Err error
}

// ScanLinux reads root, the file system at "/" (its proc and sys trees),
// for what holds timers: the processes with /dev/cpu_dma_latency open (the
// targets of /proc/PID/fd/*), the threads of user processes whose
// /proc/TID/timerslack_ns is not the default, those scheduled
// SCHED_FIFO or SCHED_RR, and the cpuidle states disabled on some CPU.
// root must implement fs.ReadLinkFS (os.DirFS and fstest.MapFS do). self
// is tickscope's own process id. What it could not read (another user's
// files, without root) is listed, not guessed.
func ScanLinux(root fs.FS, dma DMALatency, self int) *Linux {
	l := &Linux{CPUDMALatencyUs: dma.Us, DefaultSlackNs: DefaultSlackNs,
		DMALatencyHolders: []Process{}, Slack: []Thread{}, RealTime: []Thread{}, IdleDisabled: []IdleState{}, Unreadable: []Unreadable{}}
	if dma.Err != nil {
		l.Unreadable = append(l.Unreadable, Unreadable{What: "the value in force (" + DMALatencyDevice + ")", Why: dma.Err.Error()})
	}
	entries, err := fs.ReadDir(root, "proc")
	if err != nil {
		l.Unreadable = append(l.Unreadable, Unreadable{What: "/proc", Why: err.Error()})
	}
	var fdDenied, taskDenied denied
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		dir := path.Join("proc", e.Name())
		data, err := fs.ReadFile(root, dir+"/stat")
		if err != nil {
			continue // it exited
		}
		stat, err := ParseStat(string(data))
		if err != nil {
			continue
		}
		if holds, err := holdsDMALatency(root, dir); err != nil {
			fdDenied.add(err)
		} else if holds {
			l.DMALatencyHolders = append(l.DMALatencyHolders, Process{PID: pid, Name: stat.Name, Self: pid == self})
		}
		if stat.KernelThread {
			// A kernel thread's slack is the kernel's; its real-time
			// threads are counted, not listed.
			if PolicyName(stat.Policy) != "" {
				l.RealTimeKernelThreads++
			}
			continue
		}
		taskDenied.add(l.scanThreads(root, dir, pid))
	}
	fdDenied.report(l, "the open files of %d processes (/proc/PID/fd), so cpu_dma_latency holders among them are not listed",
		"another user's processes' open files are readable only as root (sudo tickscope who)")
	taskDenied.report(l, "the timer slack of the threads of %d processes (/proc/TID/timerslack_ns)", slackNeedsRoot)
	l.IdleDisabled = scanIdle(root, l)
	return l
}

// denied counts processes whose files could not be read, with the first
// reason.
type denied struct {
	n     int
	first error
}

func (d *denied) add(err error) {
	if err == nil {
		return
	}
	if d.n == 0 {
		d.first = err
	}
	d.n++
}

// slackNeedsRoot is why a thread's timer slack is unreadable: the kernel
// lets a task read only its own without CAP_SYS_NICE (fs/proc/base.c,
// timerslack_ns_show), whoever owns the other one, the user's own
// processes included.
const slackNeedsRoot = "reading any thread's timer slack but the reader's own needs root (CAP_SYS_NICE), even in the user's own processes (sudo tickscope who)"

// report lists what could not be read in the d.n processes (what has a %d
// for it): deniedWhy is why, when it was a permission denied.
func (d *denied) report(l *Linux, what, deniedWhy string) {
	if d.n == 0 {
		return
	}
	why := d.first.Error()
	if errors.Is(d.first, fs.ErrPermission) {
		why = "permission denied: " + deniedWhy
	}
	l.Unreadable = append(l.Unreadable, Unreadable{What: fmt.Sprintf(what, d.n), Why: why})
}

// holdsDMALatency reports whether a process has DMALatencyDevice open.
func holdsDMALatency(root fs.FS, dir string) (bool, error) {
	fds, err := fs.ReadDir(root, dir+"/fd")
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, fd := range fds {
		target, err := fs.ReadLink(root, dir+"/fd/"+fd.Name())
		if err == nil && target == DMALatencyDevice {
			return true, nil
		}
	}
	return false, nil
}

// scanThreads reads each thread's policy and slack. It returns the first
// error that kept a thread's slack from being read, other than the thread
// having exited.
func (l *Linux) scanThreads(root fs.FS, dir string, pid int) error {
	tasks, err := fs.ReadDir(root, dir+"/task")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	var firstErr error
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		tdir := dir + "/task/" + task.Name()
		data, err := fs.ReadFile(root, tdir+"/stat")
		if err != nil {
			continue
		}
		stat, err := ParseStat(string(data))
		if err != nil {
			continue
		}
		thread := Thread{PID: pid, TID: tid, Name: stat.Name}
		if policy := PolicyName(stat.Policy); policy != "" {
			thread.Policy, thread.Priority = policy, stat.RTPriority
			l.RealTime = append(l.RealTime, thread)
			continue
		}
		// The kernel has no task/TID/timerslack_ns; /proc/TID (a
		// thread's id, not listed in /proc but looked up) has the
		// thread's own.
		data, err = fs.ReadFile(root, "proc/"+task.Name()+"/timerslack_ns")
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) && firstErr == nil {
				firstErr = err
			}
			continue
		}
		slack, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		if err != nil || slack == DefaultSlackNs {
			continue
		}
		thread.SlackNs = slack
		l.Slack = append(l.Slack, thread)
	}
	return firstErr
}

// scanIdle lists the cpuidle states whose disable file reads 1 on some CPU.
func scanIdle(root fs.FS, l *Linux) []IdleState {
	files, _ := fs.Glob(root, "sys/devices/system/cpu/cpu*/cpuidle/state*/disable")
	byState := map[string]*IdleState{}
	for _, file := range files {
		data, err := fs.ReadFile(root, file)
		if err != nil {
			l.Unreadable = append(l.Unreadable, Unreadable{What: "/" + file, Why: err.Error()})
			continue
		}
		if strings.TrimSpace(string(data)) != "1" {
			continue
		}
		stateDir := path.Dir(file)
		cpu, err := strconv.Atoi(strings.TrimPrefix(path.Base(path.Dir(path.Dir(stateDir))), "cpu"))
		if err != nil {
			continue
		}
		state := path.Base(stateDir)
		s := byState[state]
		if s == nil {
			name, _ := fs.ReadFile(root, stateDir+"/name")
			s = &IdleState{State: state, Name: strings.TrimSpace(string(name))}
			byState[state] = s
		}
		s.CPUs = append(s.CPUs, cpu)
	}
	out := []IdleState{}
	for _, s := range byState {
		slices.Sort(s.CPUs)
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b IdleState) int { return cmp.Compare(stateNumber(a.State), stateNumber(b.State)) })
	return out
}

func stateNumber(state string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(state, "state"))
	return n
}
