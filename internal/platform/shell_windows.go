package platform

import (
	"errors"

	"golang.org/x/sys/windows"

	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/winapi"
)

// OpenURL asks the shell to open url, an address or an .html file's path,
// with the "open" verb, which starts the default browser ("ShellExecuteW
// function", Microsoft Learn).
func (shell) OpenURL(url string) error {
	verb, err := windows.UTF16PtrFromString("open")
	if err != nil {
		return err
	}
	target, err := windows.UTF16PtrFromString(url)
	if err != nil {
		return err
	}
	if err := windows.ShellExecute(0, verb, target, nil, nil, winapi.SW_SHOWNORMAL); err != nil {
		return &seam.OSError{Call: "ShellExecute open", Err: err}
	}
	return nil
}

// RunElevated starts exe with the "runas" verb, which shows the UAC
// prompt, waits for the elevated process and returns its exit code.
func (shell) RunElevated(exe string, args []string) (int, error) {
	verb, err := windows.UTF16PtrFromString("runas")
	if err != nil {
		return 0, err
	}
	file, err := windows.UTF16PtrFromString(exe)
	if err != nil {
		return 0, err
	}
	params, err := windows.UTF16PtrFromString(persist.WindowsCommandLine(args))
	if err != nil {
		return 0, err
	}
	info := winapi.SHELLEXECUTEINFOW{
		FMask:  winapi.SEE_MASK_NOCLOSEPROCESS | winapi.SEE_MASK_NOASYNC,
		LpVerb: verb, LpFile: file, LpParameters: params, NShow: winapi.SW_SHOWNORMAL,
	}
	if err := winapi.ShellExecuteEx(&info); err != nil {
		if errors.Is(err, windows.ERROR_CANCELLED) {
			return 0, errors.New("the elevation prompt was declined: nothing was changed")
		}
		return 0, &seam.OSError{Call: "ShellExecuteEx runas", Err: err}
	}
	if info.HProcess == 0 {
		return 0, errors.New("ShellExecuteEx runas returned no process to wait for")
	}
	defer windows.CloseHandle(info.HProcess)
	if _, err := windows.WaitForSingleObject(info.HProcess, windows.INFINITE); err != nil {
		return 0, &seam.OSError{Call: "WaitForSingleObject (the elevated tickscope)", Err: err}
	}
	var code uint32
	if err := windows.GetExitCodeProcess(info.HProcess, &code); err != nil {
		return 0, &seam.OSError{Call: "GetExitCodeProcess (the elevated tickscope)", Err: err}
	}
	return int(code), nil
}
