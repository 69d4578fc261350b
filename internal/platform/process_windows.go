package platform

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/winapi"
)

// DescribeProcess: Windows has no kernel threads among its process ids
// and no per-process timer slack; apply --pid is Linux's.
func (system) DescribeProcess(int) (seam.Process, error) { return seam.Process{}, seam.ErrUnsupported }

// StartTied starts cmd in a new job object whose last handle, held only by
// tickscope, kills every process in it when it closes
// (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, JOBOBJECT_BASIC_LIMIT_INFORMATION,
// learn.microsoft.com/windows/win32/api/winnt/ns-winnt-jobobject_basic_limit_information):
// the OS closes it when tickscope exits however it exits, TerminateProcess
// included. What the program starts is in the job too, so the whole tree
// ends with a killed tickscope, except a child started with
// CREATE_BREAKAWAY_FROM_JOB: the job allows that (JOB_OBJECT_LIMIT_BREAKAWAY_OK),
// as launchers and updaters ask for it and would otherwise fail with
// ERROR_ACCESS_DENIED ("Job Objects", "CreateProcessW function", process
// creation flags, Microsoft Learn). untie lifts the kill limit before the
// handle closes, so that after a normal end what the program left running
// lives on, as on Linux.
//
// The program is created suspended (CREATE_SUSPENDED), put in the job
// (AssignProcessToJobObject, which needs PROCESS_SET_QUOTA and
// PROCESS_TERMINATE), then its one thread is resumed: it runs no
// instruction, and so starts no process, outside the job. The race
// accepted: if tickscope is killed between CreateProcess and
// AssignProcessToJobObject (microseconds), the program is left suspended,
// never having run. Closing it would need PROC_THREAD_ATTRIBUTE_JOB_LIST
// (Windows 10), which os/exec cannot pass to CreateProcess.
//
// Windows 7 allows a process in one job only: when tickscope already runs
// in one (a Task Scheduler task, some terminals), the program inherits it
// and the assignment fails; the program then runs untied and the caller
// is told (*seam.NotTiedError).
func (system) StartTied(cmd *exec.Cmd) (func(), error) {
	_, untie, err := startInJob(cmd)
	return untie, err
}

// startInJob is StartTied, which also returns the job (0 when the program
// is not in it), for the tests to look into.
func startInJob(cmd *exec.Cmd) (windows.Handle, func(), error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, nil, &seam.OSError{Call: "CreateJobObject", Err: err}
	}
	if err := setKillOnClose(job, true); err != nil {
		windows.CloseHandle(job)
		return 0, nil, err
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_SUSPENDED
	if err := cmd.Start(); err != nil {
		windows.CloseHandle(job)
		return 0, nil, err
	}
	pid := uint32(cmd.Process.Pid)
	tieErr := assign(job, pid)
	if err := resume(pid); err != nil {
		cmd.Process.Kill()
		windows.CloseHandle(job)
		return 0, nil, err
	}
	if tieErr != nil {
		windows.CloseHandle(job)
		return 0, func() {}, &seam.NotTiedError{Err: tieErr}
	}
	return job, func() {
		setKillOnClose(job, false)
		windows.CloseHandle(job)
	}, nil
}

// setKillOnClose sets or clears JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, through
// SetInformationJobObject(JobObjectExtendedLimitInformation), the class
// that limit belongs to. JOB_OBJECT_LIMIT_BREAKAWAY_OK stays set either
// way: a job's processes outlive an untied job's handle, and may still
// start children that break away
// (learn.microsoft.com/windows/win32/api/winnt/ns-winnt-jobobject_basic_limit_information).
func setKillOnClose(job windows.Handle, on bool) error {
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_BREAKAWAY_OK
	if on {
		info.BasicLimitInformation.LimitFlags |= windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	}
	if err := winapi.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation, unsafe.Pointer(&info), uint32(unsafe.Sizeof(info))); err != nil {
		return &seam.OSError{Call: fmt.Sprintf("SetInformationJobObject(LimitFlags 0x%x)", info.BasicLimitInformation.LimitFlags), Err: err}
	}
	return nil
}

func assign(job windows.Handle, pid uint32) error {
	process, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, pid)
	if err != nil {
		return &seam.OSError{Call: fmt.Sprintf("OpenProcess(%d)", pid), Err: err}
	}
	defer windows.CloseHandle(process)
	if err := windows.AssignProcessToJobObject(job, process); err != nil {
		return &seam.OSError{Call: "AssignProcessToJobObject", Err: err}
	}
	return nil
}

// resume resumes the threads of a process created suspended (its one
// thread: os/exec closes the handle CreateProcess returned for it), found
// with a toolhelp snapshot (CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD),
// Thread32First/Next, OpenThread(THREAD_SUSPEND_RESUME), ResumeThread).
func resume(pid uint32) error {
	snapshot, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return &seam.OSError{Call: "CreateToolhelp32Snapshot", Err: err}
	}
	defer windows.CloseHandle(snapshot)
	entry := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snapshot, &entry); err == nil; err = windows.Thread32Next(snapshot, &entry) {
		if entry.OwnerProcessID != pid {
			continue
		}
		thread, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, entry.ThreadID)
		if err != nil {
			return &seam.OSError{Call: fmt.Sprintf("OpenThread(%d)", entry.ThreadID), Err: err}
		}
		_, err = windows.ResumeThread(thread)
		windows.CloseHandle(thread)
		if err != nil {
			return &seam.OSError{Call: fmt.Sprintf("ResumeThread(%d)", entry.ThreadID), Err: err}
		}
		resumed++
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return &seam.OSError{Call: "Thread32Next", Err: err}
	}
	if resumed == 0 {
		return &seam.OSError{Call: "Thread32First", Err: fmt.Errorf("no thread of process %d to resume", pid)}
	}
	return nil
}
