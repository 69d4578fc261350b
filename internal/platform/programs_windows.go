package platform

import (
	"errors"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/tickscope/tickscope/internal/seam"
)

// ScanPrograms scans process snapshots (snapshotScanner).
func (system) ScanPrograms(programs []string) (seam.ProgramScanner, error) {
	sc := &snapshotScanner{known: map[uint32]knownProcess{}}
	for _, program := range programs {
		p := windowsProgram{base: program[strings.LastIndexAny(program, `\/`)+1:]}
		if p.base != program {
			p.path = strings.ReplaceAll(program, "/", `\`)
		}
		sc.programs = append(sc.programs, p)
	}
	return sc, nil
}

// A snapshotScanner finds the processes of named programs in a snapshot
// of the process list (CreateToolhelp32Snapshot with TH32CS_SNAPPROCESS,
// read with Process32First/Process32Next, "Tool Help Functions",
// Microsoft Learn), which any user may take and which carries every
// process's image name: one call a scan, whatever runs. A process whose
// image name is a watched program's is opened with
// PROCESS_QUERY_LIMITED_INFORMATION, which protected processes grant too,
// once while it runs: for its start time (GetProcessTimes) and, for a
// program named by its path, its image path (QueryFullProcessImageNameW).
//
// The alternatives: the Microsoft-Windows-Kernel-Process ETW provider
// announces each start and exit, but a real-time session needs an
// elevated token, and the logon holder is not elevated; WMI's
// __InstanceCreationEvent polls the same list inside the WMI service and
// costs the machine more than a snapshot; Win32_ProcessStartTrace needs
// elevation as well.
type snapshotScanner struct {
	programs []windowsProgram
	// known are the processes of watched programs the last scan found,
	// by id, so that the next does not open them again.
	known map[uint32]knownProcess
}

// windowsProgram is one watched program: its image name, and its path
// with backslashes when it was named by its path.
type windowsProgram struct {
	base string
	path string
}

// knownProcess is a matched process as the last scan saw it.
type knownProcess struct {
	name    string
	program int
	started time.Time
}

// Scan takes a snapshot and lists the watched programs' processes in it.
func (sc *snapshotScanner) Scan() ([]seam.ProgramProcess, error) {
	snapshot, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return nil, &seam.OSError{Call: "CreateToolhelp32Snapshot", Err: err}
	}
	defer windows.CloseHandle(snapshot)
	entry := windows.ProcessEntry32{Size: uint32(unsafe.Sizeof(windows.ProcessEntry32{}))}
	known := map[uint32]knownProcess{}
	var out []seam.ProgramProcess
	for err = windows.Process32First(snapshot, &entry); err == nil; err = windows.Process32Next(snapshot, &entry) {
		name := windows.UTF16ToString(entry.ExeFile[:])
		pid := entry.ProcessID
		if was, ok := sc.known[pid]; ok && was.name == name {
			known[pid] = was
			out = append(out, seam.ProgramProcess{PID: int(pid), Program: was.program, Started: was.started})
			continue
		}
		for i, p := range sc.programs {
			if !strings.EqualFold(name, p.base) {
				continue
			}
			started, ok := sc.inspect(pid, p)
			if !ok {
				continue
			}
			known[pid] = knownProcess{name: name, program: i, started: started}
			out = append(out, seam.ProgramProcess{PID: int(pid), Program: i, Started: started})
			break
		}
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return nil, &seam.OSError{Call: "Process32Next", Err: err}
	}
	sc.known = known
	return out, nil
}

// inspect opens a process whose image name is p's: it matches when p is
// a bare name, or when its image path is p's path. started is its
// creation time, zero when the process could not be opened (a bare name
// matches all the same).
func (sc *snapshotScanner) inspect(pid uint32, p windowsProgram) (started time.Time, matches bool) {
	process, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return time.Time{}, p.path == ""
	}
	defer windows.CloseHandle(process)
	var created, exited, kernel, user windows.Filetime
	if windows.GetProcessTimes(process, &created, &exited, &kernel, &user) == nil {
		started = time.Unix(0, created.Nanoseconds())
	}
	if p.path == "" {
		return started, true
	}
	buf := make([]uint16, windows.MAX_LONG_PATH)
	size := uint32(len(buf))
	if windows.QueryFullProcessImageName(process, 0, &buf[0], &size) != nil {
		return time.Time{}, false
	}
	return started, strings.EqualFold(windows.UTF16ToString(buf[:size]), p.path)
}

// Close: a snapshot scanner keeps no handle between scans.
func (sc *snapshotScanner) Close() { sc.known = nil }
