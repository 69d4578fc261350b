package platform

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/tickscope/tickscope/internal/seam"
)

// pfKthread is PF_KTHREAD, the flag of a kernel thread in the flags field
// of /proc/PID/stat (include/linux/sched.h; proc_pid_stat(5)).
const pfKthread = 0x00200000

// DescribeProcess reads /proc/PID/stat: its comm (in parentheses, and
// itself free to hold spaces and parentheses, so the fields are counted
// after the last ")") and its flags, the 9th field.
func (system) DescribeProcess(pid int) (seam.Process, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/stat"
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return seam.Process{}, &seam.OSError{Call: "read " + path, Err: fmt.Errorf("%w (process %d)", seam.ErrNoProcess, pid)}
	}
	if err != nil {
		return seam.Process{}, &seam.OSError{Call: "read " + path, Err: err}
	}
	return parseStat(pid, string(data))
}

// parseStat parses /proc/PID/stat's text.
func parseStat(pid int, stat string) (seam.Process, error) {
	bad := func(why string) error {
		return &seam.OSError{Call: fmt.Sprintf("parse /proc/%d/stat", pid), Err: errors.New(why)}
	}
	open, end := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return seam.Process{}, bad("no (comm)")
	}
	fields := strings.Fields(stat[end+1:])
	// fields[0] is the state (field 3); flags is field 9.
	if len(fields) < 7 {
		return seam.Process{}, bad("fewer than 9 fields")
	}
	flags, err := strconv.ParseUint(fields[6], 10, 64)
	if err != nil {
		return seam.Process{}, bad("flags " + strconv.Quote(fields[6]))
	}
	return seam.Process{PID: pid, Name: stat[open+1 : end], KernelThread: flags&pfKthread != 0}, nil
}

// StartTied starts cmd with PR_SET_PDEATHSIG set to SIGKILL (prctl(2)):
// the kernel kills the program when the thread that forked it ends, which
// happens at the latest when tickscope ends, however it ends. Go sets it in
// the child between fork and exec, and kills the child itself if tickscope
// died before that (syscall/exec_linux.go), so there is no window.
//
// The signal follows the forking thread, not the process (go.dev/issue/27505):
// the caller must start cmd from a goroutine locked to its OS thread
// (runtime.LockOSThread) that stays locked until the program has exited.
// hold.Run does: it locks before it starts the program and unlocks only
// after Wait returned; and the Go runtime ends an OS thread only when a
// goroutine locked to it exits, which that goroutine does not do while the
// program runs.
//
// Only the program is tied: what it starts itself is not (the kernel
// offers no tree-wide equivalent to Windows' job objects short of a cgroup
// or a PID namespace), and the kernel clears the setting when the program
// executes a set-user-ID or set-group-ID file or one with capabilities.
func (system) StartTied(cmd *exec.Cmd) (func(), error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return func() {}, nil
}
