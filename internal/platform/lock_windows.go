package platform

import (
	"errors"
	"os"
	"strconv"

	"github.com/tickscope/tickscope/internal/seam"
	"golang.org/x/sys/windows"
)

func (system) Lock(name string) (release func(), err error) {
	// A named mutex in this session's namespace, which Windows releases
	// when its holder exits however it exits, and a file that names the
	// holder's process id.
	mutexName, err := windows.UTF16PtrFromString(`Local\tickscope-` + name)
	if err != nil {
		return nil, err
	}
	mutex, err := windows.CreateMutex(nil, true, mutexName)
	if errors.Is(err, windows.ERROR_ALREADY_EXISTS) {
		windows.CloseHandle(mutex)
		return nil, &seam.LockedError{What: name, PID: readPID(lockPath(name))}
	}
	if err != nil {
		return nil, &seam.OSError{Call: "CreateMutexW", Err: err}
	}
	path := lockPath(name)
	os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
	return func() {
		os.Remove(path)
		windows.ReleaseMutex(mutex)
		windows.CloseHandle(mutex)
	}, nil
}
