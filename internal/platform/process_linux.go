package platform

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/who"
)

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

// parseStat parses /proc/PID/stat's text (who.ParseStat).
func parseStat(pid int, stat string) (seam.Process, error) {
	s, err := who.ParseStat(stat)
	if err != nil {
		return seam.Process{}, &seam.OSError{Call: fmt.Sprintf("parse /proc/%d/stat", pid), Err: err}
	}
	return seam.Process{PID: pid, Name: s.Name, KernelThread: s.KernelThread}, nil
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
