package platform

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sys/windows"

	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/seam"
)

// A lock is a named mutex, which Windows releases ("abandons") when the
// thread that owns it ends, however its process ends. Its record, the
// file that names the holder's process id, is in the user's own
// %LOCALAPPDATA%\tickscope, which the profile's access control list keeps
// to the user, SYSTEM and administrators.

// mutexName is the kernel object name of the lock name. The names of the
// session namespace ("Local\") are the terminal (Remote Desktop) session's,
// not the logon session's ("Kernel Object Namespaces", Microsoft Learn):
// the bench and the startup holder are the user's own, and each session a
// user has holds its own. The who lock guards an ETW session,
// whose name StartTraceW keeps unique on the whole machine, so it must be
// one object machine-wide ("Global\"): only creating file-mapping and
// symbolic-link objects there needs SeCreateGlobalPrivilege ("Kernel
// Object Namespaces", Microsoft Learn). So any user can create the who
// lock's mutex first and hold it: who trusts it only while its ETW
// session runs, which only an administrator can start (who.SessionName).
func mutexName(name string) string {
	if name == seam.WhoLock {
		return `Global\tickscope-` + name
	}
	return `Local\tickscope-` + name
}

// localStateDir is %LOCALAPPDATA%\tickscope (SHGetKnownFolderPath,
// FOLDERID_LocalAppData).
func localStateDir() (string, error) {
	local, err := windows.KnownFolderPath(windows.FOLDERID_LocalAppData, windows.KF_FLAG_DEFAULT)
	if err != nil {
		return "", &seam.OSError{Call: "SHGetKnownFolderPath(FOLDERID_LocalAppData)", Err: err}
	}
	return filepath.Join(local, "tickscope"), nil
}

// recordDir is the directory of the locks' records and the holder's log,
// localStateDir, made when absent, and refused when it is a reparse point
// (a link elsewhere). Without create, one that does not exist gives an
// error wrapping fs.ErrNotExist.
func recordDir(create bool) (string, error) {
	dir, err := localStateDir()
	if err != nil {
		return "", err
	}
	if create {
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return "", &seam.OSError{Call: "create " + dir, Err: err}
		}
	}
	fi, err := os.Lstat(dir)
	switch {
	case err != nil:
		return "", &seam.OSError{Call: "stat " + dir, Err: err}
	case !fi.IsDir() || fi.Mode()&(os.ModeSymlink|os.ModeIrregular) != 0:
		return "", fmt.Errorf("refusing the lock directory %s: it is not a plain directory (a link?); remove it", dir)
	}
	return dir, nil
}

// openRecordFile opens a record without following a reparse point
// (FILE_FLAG_OPEN_REPARSE_POINT, "CreateFileW function", Microsoft Learn)
// and refuses one that is. The check reads the file's attributes
// (GetFileInformationByHandle), which needs FILE_READ_ATTRIBUTES: it is
// added to access, as GENERIC_WRITE does not hold it ("File Security and
// Access Rights", Microsoft Learn: FILE_GENERIC_WRITE has
// FILE_WRITE_ATTRIBUTES only).
func openRecordFile(path string, access, disposition uint32) (windows.Handle, error) {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return 0, err
	}
	h, err := windows.CreateFile(name, access|windows.FILE_READ_ATTRIBUTES, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, disposition, windows.FILE_ATTRIBUTE_NORMAL|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return 0, err
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil || info.FileAttributes&(windows.FILE_ATTRIBUTE_REPARSE_POINT|windows.FILE_ATTRIBUTE_DIRECTORY) != 0 {
		windows.CloseHandle(h)
		return 0, fmt.Errorf("refusing the lock record %s: it is not a plain file (a link?); remove it", path)
	}
	return h, nil
}

// writeRecordFile writes this process's id in the record of a lock it
// holds.
func writeRecordFile(path string) error {
	h, err := openRecordFile(path, windows.GENERIC_WRITE, windows.OPEN_ALWAYS)
	if err != nil {
		return &seam.OSError{Call: "open " + path, Err: err}
	}
	defer windows.CloseHandle(h)
	var n uint32
	if err := windows.WriteFile(h, formatRecord(os.Getpid()), &n, nil); err != nil {
		return &seam.OSError{Call: "write " + path, Err: err}
	}
	if err := windows.SetEndOfFile(h); err != nil {
		return &seam.OSError{Call: "truncate " + path, Err: err}
	}
	return nil
}

// readRecord reads the record of the lock name: the process id it names
// (0 for none) and its writer, the SID that owns the file.
func readRecord(name string) heldLock {
	dir, err := recordDir(false)
	if err != nil {
		return heldLock{}
	}
	h := heldLock{Record: filepath.Join(dir, name+".pid")}
	f, err := openRecordFile(h.Record, windows.GENERIC_READ|windows.READ_CONTROL, windows.OPEN_EXISTING)
	if err != nil {
		return h
	}
	defer windows.CloseHandle(f)
	buf := make([]byte, 16)
	var n uint32
	if windows.ReadFile(f, buf, &n, nil) == nil {
		h.PID = parseRecord(buf[:n])
	}
	if sd, err := windows.GetSecurityInfo(f, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION); err == nil {
		if owner, _, err := sd.Owner(); err == nil {
			h.Writer = owner.String()
		}
	}
	return h
}

// WAIT_* are WaitForSingleObject's results ("WaitForSingleObject
// function", Microsoft Learn).
const (
	waitObject0  = windows.WAIT_OBJECT_0
	waitAbandon  = windows.WAIT_ABANDONED
	waitTimedOut = uint32(windows.WAIT_TIMEOUT)
)

// Lock takes the mutex of name on a thread of its own, which owns it until
// release: a mutex belongs to a thread, not a process, and a goroutine
// moves between threads. CreateMutexW without initial ownership opens the
// object, or makes it; owning it is a wait that does not wait: free (or
// abandoned by a holder that died) it is taken, owned it times out. That
// a mutex of the name exists says nothing: a probe may have it open for an
// instant. CreateMutexW on an existing mutex asks for MUTEX_ALL_ACCESS,
// and fails with ERROR_ACCESS_DENIED when its security descriptor does not
// grant that to the caller, as an elevated holder's does not to a process
// that is not elevated ("CreateMutexW function", Microsoft Learn): the
// mutex then exists and is another's: held.
func (system) Lock(name string) (release func(), err error) {
	mutex, err := windows.UTF16PtrFromString(mutexName(name))
	if err != nil {
		return nil, err
	}
	dir, err := recordDir(true)
	if err != nil {
		return nil, err
	}
	record := filepath.Join(dir, name+".pid")
	taken := make(chan error, 1)
	releasing := make(chan struct{})
	released := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		h, err := windows.CreateMutex(nil, false, mutex)
		switch {
		case errors.Is(err, windows.ERROR_ACCESS_DENIED):
			taken <- &seam.LockedError{What: name, PID: readRecord(name).PID}
			runtime.UnlockOSThread()
			return
		case err != nil && !errors.Is(err, windows.ERROR_ALREADY_EXISTS):
			taken <- &seam.OSError{Call: "CreateMutexW(" + mutexName(name) + ")", Err: err}
			runtime.UnlockOSThread()
			return
		}
		event, err := windows.WaitForSingleObject(h, 0)
		switch {
		case event == waitTimedOut:
			windows.CloseHandle(h)
			taken <- &seam.LockedError{What: name, PID: readRecord(name).PID}
			runtime.UnlockOSThread()
			return
		case event != waitObject0 && event != waitAbandon:
			windows.CloseHandle(h)
			taken <- &seam.OSError{Call: "WaitForSingleObject(" + mutexName(name) + ")", Err: err}
			runtime.UnlockOSThread()
			return
		}
		if err := writeRecordFile(record); err != nil {
			windows.ReleaseMutex(h)
			windows.CloseHandle(h)
			taken <- err
			runtime.UnlockOSThread()
			return
		}
		taken <- nil
		<-releasing
		os.Remove(record)
		err = windows.ReleaseMutex(h)
		windows.CloseHandle(h)
		if err == nil {
			runtime.UnlockOSThread()
		}
		// Otherwise the thread still owns the mutex: it ends with this
		// goroutine, locked, and Windows abandons the mutex.
		close(released)
	}()
	if err := <-taken; err != nil {
		return nil, err
	}
	return func() {
		close(releasing)
		<-released
	}, nil
}

// heldHolder tells whether the startup holder's mutex exists, without
// creating it (CreateMutexW would, and a holder starting at that instant
// would find it there): OpenMutexW with SYNCHRONIZE, the least access,
// fails with ERROR_FILE_NOT_FOUND when no mutex of the name exists, and
// with ERROR_ACCESS_DENIED when one does whose security descriptor denies
// even that, an elevated holder's to a process that is not elevated
// ("OpenMutexW function", Microsoft Learn).
func heldHolder() (heldLock, bool) {
	name, err := windows.UTF16PtrFromString(mutexName(seam.HolderLock))
	if err != nil {
		return heldLock{}, false
	}
	h, err := windows.OpenMutex(windows.SYNCHRONIZE, false, name)
	switch {
	case err == nil:
		windows.CloseHandle(h)
	case !errors.Is(err, windows.ERROR_ACCESS_DENIED):
		return heldLock{}, false
	}
	return readRecord(seam.HolderLock), true
}

func (system) Holder() (pid int, running bool) {
	h, running := heldHolder()
	return h.PID, running
}

// endRecordedHolder ends the process the holder's record names with
// TerminateProcess once it has passed mayEnd. One handle is used to read
// what the process is and to end it, so that it is the process checked
// that is ended: a handle keeps its process id from being reused.
func endRecordedHolder(h heldLock) error {
	p, err := windows.OpenProcess(windows.PROCESS_TERMINATE|windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(h.PID))
	if errors.Is(err, windows.ERROR_INVALID_PARAMETER) {
		return fmt.Errorf("the holder's record %s names process %d, which does not run: nothing was ended", h.Record, h.PID)
	}
	if err != nil {
		return &seam.OSError{Call: fmt.Sprintf("OpenProcess(%d)", h.PID), Err: err}
	}
	defer windows.CloseHandle(p)
	rp, err := describeProcess(p, h.PID)
	if err != nil {
		return fmt.Errorf("not ending process %d, which the holder's record %s names: %w", h.PID, h.Record, err)
	}
	self, err := os.Executable()
	if err != nil {
		return &seam.OSError{Call: "find this executable", Err: err}
	}
	caller, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return &seam.OSError{Call: "GetTokenInformation(TokenUser)", Err: err}
	}
	allowed := []string{self, persist.HolderPath(self, true)}
	if err := mayEnd(rp, h, allowed, sameWindowsPath, caller.User.Sid.String()); err != nil {
		return err
	}
	if err := windows.TerminateProcess(p, 1); err != nil {
		return &seam.OSError{Call: fmt.Sprintf("TerminateProcess(%d)", h.PID), Err: err}
	}
	windows.WaitForSingleObject(p, 2000)
	return nil
}

// describeProcess reads the executable a process runs
// (QueryFullProcessImageNameW) and its token's user
// (OpenProcessToken, GetTokenInformation(TokenUser)).
func describeProcess(p windows.Handle, pid int) (recordedProcess, error) {
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n := uint32(len(buf))
	if err := windows.QueryFullProcessImageName(p, 0, &buf[0], &n); err != nil {
		return recordedProcess{}, &seam.OSError{Call: "QueryFullProcessImageNameW", Err: err}
	}
	var token windows.Token
	if err := windows.OpenProcessToken(p, windows.TOKEN_QUERY, &token); err != nil {
		return recordedProcess{}, &seam.OSError{Call: "OpenProcessToken", Err: err}
	}
	defer token.Close()
	user, err := token.GetTokenUser()
	if err != nil {
		return recordedProcess{}, &seam.OSError{Call: "GetTokenInformation(TokenUser)", Err: err}
	}
	return recordedProcess{PID: pid, Exe: windows.UTF16ToString(buf[:n]), Owner: user.User.Sid.String()}, nil
}

// sameWindowsPath compares paths as Windows does: case-insensitively.
func sameWindowsPath(a, b string) bool {
	return strings.EqualFold(filepath.Clean(a), filepath.Clean(b))
}
