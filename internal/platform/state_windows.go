package platform

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"

	"github.com/tickscope/tickscope/internal/seam"
)

// The state directory is the records' (lock_windows.go):
// %LOCALAPPDATA%\tickscope, which the profile's access control list keeps
// to the user, SYSTEM and administrators.

func (system) StateDir() (string, error) { return localStateDir() }

// OpenStateFile opens name without following a reparse point
// (FILE_FLAG_OPEN_REPARSE_POINT) and never with a disposition that
// truncates (CREATE_ALWAYS, TRUNCATE_EXISTING): what was opened is checked
// (no reparse point, no directory, one name) before SetEndOfFile empties
// it. Appending asks for FILE_APPEND_DATA without FILE_WRITE_DATA, so that
// every write goes to the end ("File Access Rights Constants", Microsoft
// Learn); FILE_READ_ATTRIBUTES is asked for as the check reads them.
func (system) OpenStateFile(name string, how seam.StateOpen) (*os.File, error) {
	dir, err := recordDir(how != seam.StateRead)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, name)
	var access, disposition uint32
	switch how {
	case seam.StateRead:
		access, disposition = windows.GENERIC_READ, windows.OPEN_EXISTING
	case seam.StateReplace:
		access, disposition = windows.GENERIC_WRITE|windows.FILE_READ_ATTRIBUTES, windows.OPEN_ALWAYS
	case seam.StateAppend:
		access, disposition = windows.FILE_APPEND_DATA|windows.FILE_READ_ATTRIBUTES|windows.SYNCHRONIZE, windows.OPEN_ALWAYS
	default:
		return nil, fmt.Errorf("open %s: unknown way %d", path, how)
	}
	name16, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, err
	}
	h, err := windows.CreateFile(name16, access, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, disposition, windows.FILE_ATTRIBUTE_NORMAL|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	switch {
	case errors.Is(err, windows.ERROR_FILE_NOT_FOUND) || errors.Is(err, windows.ERROR_PATH_NOT_FOUND):
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	case err != nil:
		return nil, &seam.OSError{Call: "open " + path, Err: err}
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		windows.CloseHandle(h)
		return nil, &seam.OSError{Call: "read the attributes of " + path, Err: err}
	}
	if info.FileAttributes&(windows.FILE_ATTRIBUTE_REPARSE_POINT|windows.FILE_ATTRIBUTE_DIRECTORY) != 0 || info.NumberOfLinks != 1 {
		windows.CloseHandle(h)
		return nil, fmt.Errorf("refusing the state file %s: it is not a plain file with one name (a link?); remove it", path)
	}
	if how == seam.StateReplace {
		if err := windows.SetEndOfFile(h); err != nil {
			windows.CloseHandle(h)
			return nil, &seam.OSError{Call: "truncate " + path, Err: err}
		}
	}
	return os.NewFile(uintptr(h), path), nil
}
