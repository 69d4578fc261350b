package platform

import (
	"errors"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/winapi"
)

// ScanPrograms scans process snapshots (snapshotScanner).
func (system) ScanPrograms(programs []string) (seam.ProgramScanner, error) {
	sc := &snapshotScanner{known: map[uint32]knownProcess{}, unread: map[uint32]snapshotIdentity{}, rejected: map[uint32]rejectedProcess{}}
	paths := make([][]string, len(programs))
	for i, program := range programs {
		p := options.NewProgram(program, true, nil)
		sc.programs = append(sc.programs, p)
		paths[i] = p.Paths()
	}
	sc.files = newProgramFiles(paths, fileKeyOf)
	return sc, nil
}

// fileKeyOf reads the key of the file at path (links followed): it is
// opened for its attributes alone (FILE_READ_ATTRIBUTES, every share mode,
// so that a running program's image, which is open, opens too) and its
// FILE_ID_INFO read (GetFileInformationByHandleEx, FileIdInfo, Windows 8
// and later: the 128-bit ids ReFS needs), or where that fails its
// BY_HANDLE_FILE_INFORMATION (GetFileInformationByHandle). ok is false
// when there is no file at path.
func fileKeyOf(path string) (key fileKey, ok bool, err error) {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return fileKey{}, false, nil
	}
	h, err := windows.CreateFile(name, windows.FILE_READ_ATTRIBUTES, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING, 0, 0)
	switch {
	case errors.Is(err, windows.ERROR_FILE_NOT_FOUND), errors.Is(err, windows.ERROR_PATH_NOT_FOUND), errors.Is(err, windows.ERROR_INVALID_NAME):
		return fileKey{}, false, nil
	case err != nil:
		return fileKey{}, false, &seam.OSError{Call: "open " + path, Err: err}
	}
	defer windows.CloseHandle(h)
	var id fileIDInfo
	if windows.GetFileInformationByHandleEx(h, windows.FileIdInfo, (*byte)(unsafe.Pointer(&id)), uint32(unsafe.Sizeof(id))) == nil {
		return fileKey{wide: true, volume: id.VolumeSerialNumber, id: id.FileID}, true, nil
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		return fileKey{}, false, &seam.OSError{Call: "read the file id of " + path, Err: err}
	}
	key = fileKey{volume: uint64(info.VolumeSerialNumber)}
	index := uint64(info.FileIndexHigh)<<32 | uint64(info.FileIndexLow)
	for b := range 8 {
		key.id[b] = byte(index >> (8 * b))
	}
	return key, true, nil
}

// fileIDInfo is FILE_ID_INFO (winbase.h, "FILE_ID_INFO structure",
// Microsoft Learn): a volume's serial number and a file's FILE_ID_128.
type fileIDInfo struct {
	VolumeSerialNumber uint64
	FileID             [16]byte
}

// A snapshotScanner finds the processes of named programs in a snapshot
// of the process list (CreateToolhelp32Snapshot with TH32CS_SNAPPROCESS,
// read with Process32First/Process32Next, "Tool Help Functions",
// Microsoft Learn), which any user may take and which carries every
// process's image name: one call a scan, whatever runs. A process whose
// image name is a watched program's is opened with
// PROCESS_QUERY_LIMITED_INFORMATION, which protected processes grant too,
// once while it runs: for its start time (GetProcessTimes) and, for a
// program named by its path, its image path (QueryFullProcessImageNameW),
// whose file must be the one the program's path named (programFiles: the
// volume's serial number and the file's id, fileKeyOf), not a file whose
// path reads the same. Names compare as options.Program says (without
// case; a name without .exe as with it). What a process was found to be,
// a watched program's or not, is kept by its id and start time, and told
// again only for a new process given the same id (or, for one that ran
// no program, once the program's path names another file).
//
// The alternatives: the Microsoft-Windows-Kernel-Process ETW provider
// announces each start and exit, but a real-time session needs an
// elevated token, and the logon holder is not elevated; WMI's
// __InstanceCreationEvent polls the same list inside the WMI service and
// costs the machine more than a snapshot; Win32_ProcessStartTrace needs
// elevation as well.
type snapshotScanner struct {
	programs []options.Program
	// known are the processes of watched programs the last scan found,
	// by id, so that the next inspects them no more (it reads their start
	// time alone).
	known map[uint32]knownProcess
	// unread are the processes whose image path a program named by its
	// path needed and that could not be opened or read, by id, so that
	// they are neither opened again nor reported again while they run.
	// A process that cannot be opened has no start time to tell it by:
	// its parent's id and image name from the snapshot stand for it, so
	// that a new process given the same id is tried afresh.
	unread map[uint32]snapshotIdentity
	// rejected are the processes whose image name is a watched program's
	// but that run none (another file than the path names), by id, so
	// that they are not opened and read again at every scan: each is told
	// again when its start time changes (its id is another process's) or
	// when files.generation does (a program's path names another file).
	rejected map[uint32]rejectedProcess
	// files are the files the programs named by their paths name.
	files *programFiles
	// unreadable are the processes the last scan could not tell for the
	// first time (Unreadable).
	unreadable []seam.UnreadableProcess
}

// rejectedProcess is a process told not to run a watched program.
type rejectedProcess struct {
	name       string
	started    time.Time
	generation uint64
}

// knownProcess is a matched process as the last scan saw it.
type knownProcess struct {
	name    string
	program int
	started time.Time
	// sid is its token's user (processUser), "" when it could not be
	// read: read once, as a process's primary token stays its own.
	sid string
}

// snapshotIdentity is what a snapshot says of a process besides its id.
type snapshotIdentity struct {
	parent uint32
	name   string
}

// Scan takes a snapshot and lists the watched programs' processes in it.
func (sc *snapshotScanner) Scan() ([]seam.ProgramProcess, error) {
	sc.unreadable = nil
	snapshot, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return nil, &seam.OSError{Call: "CreateToolhelp32Snapshot", Err: err}
	}
	defer windows.CloseHandle(snapshot)
	entry := windows.ProcessEntry32{Size: uint32(unsafe.Sizeof(windows.ProcessEntry32{}))}
	known := map[uint32]knownProcess{}
	unread := map[uint32]snapshotIdentity{}
	rejected := map[uint32]rejectedProcess{}
	var out []seam.ProgramProcess
	for err = windows.Process32First(snapshot, &entry); err == nil; err = windows.Process32Next(snapshot, &entry) {
		name := windows.UTF16ToString(entry.ExeFile[:])
		pid := entry.ProcessID
		if was, ok := sc.known[pid]; ok && was.name == name {
			same, gone := sc.stillKnown(pid, was)
			if gone {
				continue
			}
			if same {
				known[pid] = was
				out = append(out, seam.ProgramProcess{PID: int(pid), Program: was.program, Started: was.started, UID: -1, SID: was.sid})
				continue
			}
			// Another process of the same name has the id: it is told
			// afresh.
		}
		id := snapshotIdentity{parent: entry.ParentProcessID, name: name}
		if was, ok := sc.unread[pid]; ok && was == id {
			unread[pid] = id
			continue
		}
		if was, ok := sc.rejected[pid]; ok && was.name == name && was.generation == sc.files.generation {
			if started, err := processStart(pid); err == nil && started.Equal(was.started) {
				rejected[pid] = was
				continue
			}
		}
		// candidate is set once a program's image name is this process's,
		// settled once it is found to run one or could not be told.
		candidate, settled := false, false
		var started time.Time
		var sid string
		for i, p := range sc.programs {
			if !p.ShortNameMatches(name) {
				continue
			}
			candidate = true
			var matches bool
			var readErr error
			started, sid, matches, readErr = sc.inspect(pid, i)
			if readErr != nil {
				unread[pid] = id
				sc.unreadable = append(sc.unreadable, seam.UnreadableProcess{PID: int(pid), Program: i, Err: readErr})
				settled = true
				break
			}
			if !matches {
				continue
			}
			settled = true
			known[pid] = knownProcess{name: name, program: i, started: started, sid: sid}
			out = append(out, seam.ProgramProcess{PID: int(pid), Program: i, Started: started, UID: -1, SID: sid})
			break
		}
		if candidate && !settled && !started.IsZero() {
			rejected[pid] = rejectedProcess{name: name, started: started, generation: sc.files.generation}
		}
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return nil, &seam.OSError{Call: "Process32Next", Err: err}
	}
	sc.known, sc.unread, sc.rejected = known, unread, rejected
	return out, nil
}

// stillKnown tells whether the process with id pid is the one the last
// scan knew as was: the id of one that exited may be given to another
// process, of the same image name too, between two scans. Its creation
// time (GetProcessTimes) tells them apart. A process whose start time was
// never read (it could not be opened) is taken to be the same, as nothing
// tells it from another; gone is true when no process has the id now.
func (sc *snapshotScanner) stillKnown(pid uint32, was knownProcess) (same, gone bool) {
	if was.started.IsZero() {
		return true, false
	}
	started, err := processStart(pid)
	switch {
	case errors.Is(err, windows.ERROR_INVALID_PARAMETER):
		return false, true
	case err != nil:
		// It was opened before and is refused now: another process.
		return false, false
	}
	return started.Equal(was.started), false
}

// processStart is the creation time of the process with id pid.
func processStart(pid uint32) (time.Time, error) {
	process, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return time.Time{}, err
	}
	defer windows.CloseHandle(process)
	return creationTime(process)
}

// errStartUnknown is a creation time that cannot be the process's start
// (startKnown).
var errStartUnknown = errors.New("GetProcessTimes: a creation time before boot or after now")

// creationTime is an open process's creation time (GetProcessTimes),
// errStartUnknown when it cannot be its start.
func creationTime(process windows.Handle) (time.Time, error) {
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(process, &created, &exited, &kernel, &user); err != nil {
		return time.Time{}, err
	}
	t := time.Unix(0, created.Nanoseconds())
	if !startKnown(t, time.Now(), time.Duration(winapi.GetTickCount64())*time.Millisecond) {
		return time.Time{}, errStartUnknown
	}
	return t, nil
}

// inspect opens a process whose image name is program i's: it matches
// when the program is a bare name, or when its image path names the file
// the program's path names (programFiles.runs). started is its creation
// time, zero when the process could not be opened (a bare name matches
// all the same), and sid its user (processUser); unreadable is why a
// program named by its path could not be told.
func (sc *snapshotScanner) inspect(pid uint32, i int) (started time.Time, sid string, matches bool, unreadable error) {
	p := sc.programs[i]
	process, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	switch {
	case err == nil:
	case !p.NeedsPath():
		return time.Time{}, "", true, nil
	case errors.Is(err, windows.ERROR_INVALID_PARAMETER):
		// It exited after the snapshot: no such process now.
		return time.Time{}, "", false, nil
	default:
		return time.Time{}, "", false, &seam.OSError{Call: "OpenProcess", Err: err}
	}
	defer windows.CloseHandle(process)
	started, err = creationTime(process)
	if errors.Is(err, errStartUnknown) {
		// Not yet its start: looked at again at the next scan.
		return time.Time{}, "", false, nil
	}
	if p.NeedsPath() {
		buf := make([]uint16, windows.MAX_LONG_PATH)
		size := uint32(len(buf))
		if err := windows.QueryFullProcessImageName(process, 0, &buf[0], &size); err != nil {
			return time.Time{}, "", false, &seam.OSError{Call: "QueryFullProcessImageNameW", Err: err}
		}
		_, runs, err := sc.files.runs(i, windows.UTF16ToString(buf[:size]))
		if err != nil || !runs {
			return started, "", false, err
		}
	}
	return started, processUser(process), true, nil
}

// processUser is the user of the process's token as a SID's text
// (OpenProcessToken for TOKEN_QUERY, GetTokenInformation of TokenUser),
// "" when it cannot be read: the token's access control grants
// TOKEN_QUERY to its user, SYSTEM and administrators, so another user's
// process is read only by an elevated holder. A process's primary token
// is fixed once it runs, so it is read once.
func processUser(process windows.Handle) string {
	var token windows.Token
	if err := windows.OpenProcessToken(process, windows.TOKEN_QUERY, &token); err != nil {
		return ""
	}
	defer token.Close()
	user, err := token.GetTokenUser()
	if err != nil {
		return ""
	}
	return user.User.Sid.String()
}

// Unreadable lists the processes the last scan met and could not tell.
func (sc *snapshotScanner) Unreadable() []seam.UnreadableProcess { return sc.unreadable }

// Hint: a snapshot lists every process at every scan, and no event
// source gives hints on Windows.
func (sc *snapshotScanner) Hint(seam.ScanHint) {}

// Close: a snapshot scanner keeps no handle between scans.
func (sc *snapshotScanner) Close() { sc.known, sc.unread, sc.rejected = nil, nil, nil }
