package platform

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/svc"
	"golang.org/x/sys/windows/svc/eventlog"
	"golang.org/x/sys/windows/svc/mgr"

	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/winapi"
)

func (system) BootService() seam.Service { return bootService{name: persist.ServiceName} }

// bootService is the Windows service called name, through the service
// manager's API as golang.org/x/sys/windows/svc/mgr wraps it. Reading opens
// the manager and the service with query rights only, which every
// authenticated user has on a service by default, so that status works
// unelevated; changing it needs an administrator.
type bootService struct{ name string }

var _ seam.Service = bootService{}

func (s bootService) Describe() string { return "Windows service " + s.name }

// DeleteByHand is what an administrator types: sc.exe is on every Windows
// (PowerShell reads a bare `sc` as Set-Content).
func (s bootService) DeleteByHand() string { return "sc.exe delete " + s.name }

// open opens the service with access and calls use; found is false, with
// no error, when no service of that name exists.
func (s bootService) open(access uint32, use func(*mgr.Service) error) (found bool, err error) {
	manager, err := windows.OpenSCManager(nil, nil, windows.SC_MANAGER_CONNECT)
	if err != nil {
		return false, &seam.OSError{Call: "OpenSCManagerW", Err: err}
	}
	defer windows.CloseServiceHandle(manager)
	name, err := windows.UTF16PtrFromString(s.name)
	if err != nil {
		return false, err
	}
	h, err := windows.OpenService(manager, name, access)
	if errors.Is(err, windows.ERROR_SERVICE_DOES_NOT_EXIST) {
		return false, nil
	}
	if err != nil {
		return false, &seam.OSError{Call: "OpenServiceW(" + s.name + ")", Err: err}
	}
	service := &mgr.Service{Name: s.name, Handle: h}
	defer service.Close()
	return true, use(service)
}

// Read returns the service's definition as persist.ServiceText writes it,
// or nil when none is installed. It reads the configuration itself rather
// than through mgr.Service.Config, which also asks for the service's SID
// type and fails where the manager keeps none (Wine's).
func (s bootService) Read() ([]byte, error) {
	var text string
	_, err := s.open(windows.SERVICE_QUERY_CONFIG, func(service *mgr.Service) error {
		config, err := winapi.QueryServiceConfig(service.Handle)
		if err != nil {
			return &seam.OSError{Call: "QueryServiceConfigW(" + s.name + ")", Err: err}
		}
		def := persist.Service{
			Name:         s.name,
			Type:         config.ServiceType,
			StartType:    config.StartType,
			ErrorControl: config.ErrorControl,
			CommandLine:  windows.UTF16PtrToString(config.BinaryPathName),
			DisplayName:  windows.UTF16PtrToString(config.DisplayName),
			Account:      windows.UTF16PtrToString(config.ServiceStartName),
		}
		buf, err := winapi.QueryServiceConfig2(service.Handle, windows.SERVICE_CONFIG_DESCRIPTION)
		if err != nil {
			return &seam.OSError{Call: "QueryServiceConfig2W(" + s.name + ", SERVICE_CONFIG_DESCRIPTION)", Err: err}
		}
		def.Description = windows.UTF16PtrToString((*windows.SERVICE_DESCRIPTION)(unsafe.Pointer(&buf[0])).Description)
		// A manager that keeps no privilege list (Wine's answers
		// ERROR_INVALID_LEVEL) leaves Privileges nil: unknown.
		def.Privileges, err = winapi.ServiceRequiredPrivileges(service.Handle)
		if err != nil && !errors.Is(err, windows.ERROR_INVALID_LEVEL) {
			return &seam.OSError{Call: "QueryServiceConfig2W(" + s.name + ", SERVICE_CONFIG_REQUIRED_PRIVILEGES_INFO)", Err: err}
		}
		text = persist.ServiceText(def)
		return nil
	})
	if err != nil || text == "" {
		return nil, err
	}
	return []byte(text), nil
}

// Install creates the service the definition describes, or changes the
// existing one of that name to it (apply --persist checks first that it
// is tickscope's), with its required privileges set before it starts
// automatically (installService: undone on any failure). A manager that
// keeps no privilege list (Wine's) leaves the service with its account's;
// Read then says so.
func (s bootService) Install(definition []byte) error {
	def, err := persist.ParseService(string(definition))
	if err != nil {
		return err
	}
	if def.Name != s.name {
		return fmt.Errorf("the definition names the service %q, not %q", def.Name, s.name)
	}
	for _, text := range []string{def.Name, def.CommandLine, def.Account, def.DisplayName, def.Description} {
		if _, err := windows.UTF16PtrFromString(text); err != nil {
			return err
		}
	}
	manager, err := mgr.Connect()
	if err != nil {
		return &seam.OSError{Call: "OpenSCManagerW(SC_MANAGER_ALL_ACCESS)", Err: err}
	}
	defer manager.Disconnect()
	steps := &managerSteps{manager: manager.Handle, name: s.name}
	defer steps.close()
	return installService(steps, def)
}

// managerSteps are installService's steps on the service manager.
type managerSteps struct {
	manager windows.Handle
	name    string
	service windows.Handle
}

var _ serviceSteps = (*managerSteps)(nil)

func (m *managerSteps) close() {
	if m.service != 0 {
		windows.CloseServiceHandle(m.service)
		m.service = 0
	}
}

// utf16Ptr is s as a NUL-terminated string; Install checked that none holds
// a NUL.
func utf16Ptr(s string) *uint16 {
	p, _ := windows.UTF16PtrFromString(s)
	return p
}

func (m *managerSteps) open() (bool, error) {
	h, err := windows.OpenService(m.manager, utf16Ptr(m.name), windows.SERVICE_ALL_ACCESS)
	if errors.Is(err, windows.ERROR_SERVICE_DOES_NOT_EXIST) {
		return false, nil
	}
	if err != nil {
		return false, &seam.OSError{Call: "OpenServiceW(" + m.name + ")", Err: err}
	}
	m.service = h
	return true, nil
}

// create is CreateServiceW, then the description: the password of a
// built-in account is the empty string (servicePassword); no load-order
// group, tag or dependencies.
func (m *managerSteps) create(def persist.Service) error {
	h, err := windows.CreateService(m.manager, utf16Ptr(m.name), utf16Ptr(def.DisplayName), windows.SERVICE_ALL_ACCESS,
		def.Type, def.StartType, def.ErrorControl, utf16Ptr(def.CommandLine), nil, nil, nil, utf16Ptr(def.Account), servicePassword(def.Account))
	if err != nil {
		return &seam.OSError{Call: "CreateServiceW(" + m.name + ")", Err: err}
	}
	m.service = h
	if err := setDescription(h, def.Description); err != nil {
		if derr := m.remove(); derr != nil {
			return fmt.Errorf("%w; deleting the service created failed too: %w", err, derr)
		}
		return err
	}
	return nil
}

func (m *managerSteps) save() (func() error, error) {
	config, err := winapi.QueryServiceConfig(m.service)
	if err != nil {
		return nil, &seam.OSError{Call: "QueryServiceConfigW(" + m.name + ")", Err: err}
	}
	was := persist.Service{
		Name:         m.name,
		Type:         config.ServiceType,
		StartType:    config.StartType,
		ErrorControl: config.ErrorControl,
		CommandLine:  windows.UTF16PtrToString(config.BinaryPathName),
		DisplayName:  windows.UTF16PtrToString(config.DisplayName),
		Account:      windows.UTF16PtrToString(config.ServiceStartName),
	}
	buf, err := winapi.QueryServiceConfig2(m.service, windows.SERVICE_CONFIG_DESCRIPTION)
	if err != nil {
		return nil, &seam.OSError{Call: "QueryServiceConfig2W(" + m.name + ", SERVICE_CONFIG_DESCRIPTION)", Err: err}
	}
	was.Description = windows.UTF16PtrToString((*windows.SERVICE_DESCRIPTION)(unsafe.Pointer(&buf[0])).Description)
	// nil where the manager keeps no list (Wine's): nothing to put back.
	was.Privileges, err = winapi.ServiceRequiredPrivileges(m.service)
	if err != nil && !errors.Is(err, windows.ERROR_INVALID_LEVEL) {
		return nil, &seam.OSError{Call: "QueryServiceConfig2W(" + m.name + ", SERVICE_CONFIG_REQUIRED_PRIVILEGES_INFO)", Err: err}
	}
	return func() error {
		if err := changeService(m.service, was); err != nil {
			return err
		}
		if was.Privileges != nil {
			return m.setPrivileges(was.Privileges)
		}
		return nil
	}, nil
}

func (m *managerSteps) change(def persist.Service) error { return changeService(m.service, def) }

func (m *managerSteps) setPrivileges(privileges []string) error {
	if err := winapi.SetServiceRequiredPrivileges(m.service, privileges); err != nil && !errors.Is(err, windows.ERROR_INVALID_LEVEL) {
		return &seam.OSError{Call: "ChangeServiceConfig2W(" + m.name + ", SERVICE_CONFIG_REQUIRED_PRIVILEGES_INFO)", Err: err}
	}
	return nil
}

// setStartType is ChangeServiceConfigW with SERVICE_NO_CHANGE and NULL for
// everything but the start type.
func (m *managerSteps) setStartType(start uint32) error {
	if err := windows.ChangeServiceConfig(m.service, windows.SERVICE_NO_CHANGE, start, windows.SERVICE_NO_CHANGE, nil, nil, nil, nil, nil, nil, nil); err != nil {
		return &seam.OSError{Call: "ChangeServiceConfigW(" + m.name + ", start type)", Err: err}
	}
	return nil
}

// remove marks the service for deletion; the manager deletes it once the
// last handle, this one, is closed.
func (m *managerSteps) remove() error {
	if err := windows.DeleteService(m.service); err != nil && !errors.Is(err, windows.ERROR_SERVICE_MARKED_FOR_DELETE) {
		return &seam.OSError{Call: "DeleteService(" + m.name + ")", Err: err}
	}
	return nil
}

// changeService makes an installed service what def describes
// (ChangeServiceConfigW, and ChangeServiceConfig2W for the description).
// mgr.Service.UpdateConfig would set the SID type and delayed start too,
// which the definition does not hold.
func changeService(h windows.Handle, def persist.Service) error {
	for _, s := range []string{def.CommandLine, def.Account, def.DisplayName, def.Description} {
		if _, err := windows.UTF16PtrFromString(s); err != nil {
			return err
		}
	}
	// A nil load-order group, tag and dependencies leave them as they are.
	if err := windows.ChangeServiceConfig(h, def.Type, def.StartType, def.ErrorControl, utf16Ptr(def.CommandLine), nil, nil, nil, utf16Ptr(def.Account), servicePassword(def.Account), utf16Ptr(def.DisplayName)); err != nil {
		return &seam.OSError{Call: "ChangeServiceConfigW", Err: err}
	}
	return setDescription(h, def.Description)
}

// setDescription is ChangeServiceConfig2W(SERVICE_CONFIG_DESCRIPTION).
func setDescription(h windows.Handle, text string) error {
	description := windows.SERVICE_DESCRIPTION{Description: utf16Ptr(text)}
	if err := windows.ChangeServiceConfig2(h, windows.SERVICE_CONFIG_DESCRIPTION, (*byte)(unsafe.Pointer(&description))); err != nil {
		return &seam.OSError{Call: "ChangeServiceConfig2W(SERVICE_CONFIG_DESCRIPTION)", Err: err}
	}
	return nil
}

// servicePassword is the lpPassword of CreateServiceW and
// ChangeServiceConfigW for account: an empty string for a built-in
// service account, as the documentation asks, and nil (for
// ChangeServiceConfigW, "unchanged") for any other.
func servicePassword(account string) *uint16 {
	if persist.BuiltInAccount(account) {
		return &[]uint16{0}[0]
	}
	return nil
}

// Start starts the service; one that runs already is left running.
func (s bootService) Start() error {
	found, err := s.open(windows.SERVICE_START, func(service *mgr.Service) error {
		if err := service.Start(); err != nil && !errors.Is(err, windows.ERROR_SERVICE_ALREADY_RUNNING) {
			return &seam.OSError{Call: "StartServiceW(" + s.name + ")", Err: err}
		}
		return nil
	})
	if err == nil && !found {
		return &seam.OSError{Call: "OpenServiceW(" + s.name + ")", Err: windows.ERROR_SERVICE_DOES_NOT_EXIST}
	}
	return err
}

// stopWait is how long Stop waits for the service to stop. The holder
// releases its request at once; the service manager gives a service 20 s
// at shutdown by default.
const stopWait = 20 * time.Second

// Stop asks the service to stop and waits until the service manager says
// it has: a service that is not running, or not installed, is left so. A
// service that is starting (as at boot) accepts no Stop until it runs: it
// is asked again once it does.
func (s bootService) Stop() error {
	_, err := s.open(windows.SERVICE_STOP|windows.SERVICE_QUERY_STATUS, func(service *mgr.Service) error {
		deadline := time.Now().Add(stopWait)
		var status svc.Status
		asked := false
		for {
			if !asked {
				_, err := service.Control(svc.Stop)
				switch {
				case err == nil:
					asked = true
				case errors.Is(err, windows.ERROR_SERVICE_NOT_ACTIVE):
					return nil
				case !errors.Is(err, windows.ERROR_SERVICE_CANNOT_ACCEPT_CTRL):
					return &seam.OSError{Call: "ControlService(" + s.name + ", SERVICE_CONTROL_STOP)", Err: err}
				}
			}
			var err error
			if status, err = service.Query(); err != nil {
				return &seam.OSError{Call: "QueryServiceStatusEx(" + s.name + ")", Err: err}
			}
			switch status.State {
			case svc.Stopped:
				return nil
			case svc.StopPending:
				asked = true
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("the %s is still %s %v after it was asked to stop", s.Describe(), stateName(status.State), stopWait)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	return err
}

// Delete removes the service. The service manager deletes it once it has
// stopped and the last handle to it is closed; one already marked for
// deletion is as good as deleted.
func (s bootService) Delete() error {
	found, err := s.open(windows.DELETE, func(service *mgr.Service) error {
		if err := service.Delete(); err != nil && !errors.Is(err, windows.ERROR_SERVICE_MARKED_FOR_DELETE) {
			return &seam.OSError{Call: "DeleteService(" + s.name + ")", Err: err}
		}
		return nil
	})
	if err == nil && !found {
		return &seam.OSError{Call: "OpenServiceW(" + s.name + ")", Err: windows.ERROR_SERVICE_DOES_NOT_EXIST}
	}
	return err
}

// State is the service's state from QueryServiceStatusEx.
func (s bootService) State() (seam.ServiceState, error) {
	var state seam.ServiceState
	_, err := s.open(windows.SERVICE_QUERY_STATUS, func(service *mgr.Service) error {
		status, err := service.Query()
		if err != nil {
			return &seam.OSError{Call: "QueryServiceStatusEx(" + s.name + ")", Err: err}
		}
		state = seam.ServiceState{State: stateName(status.State), PID: int(status.ProcessId), ExitCode: status.Win32ExitCode}
		switch status.Win32ExitCode {
		case uint32(windows.ERROR_SERVICE_SPECIFIC_ERROR):
			state.ExitCode, state.ServiceSpecific = status.ServiceSpecificExitCode, true
		case uint32(windows.ERROR_SERVICE_NEVER_STARTED):
			// What a service that has not run since the manager started
			// reports: no exit at all.
			state.ExitCode = 0
		}
		return nil
	})
	return state, err
}

// stateName is a service state as seam.ServiceState names it
// ("SERVICE_STATUS structure", dwCurrentState, Microsoft Learn).
func stateName(state svc.State) string {
	switch state {
	case svc.Stopped:
		return "stopped"
	case svc.StartPending:
		return "start pending"
	case svc.StopPending:
		return "stop pending"
	case svc.Running:
		return "running"
	case svc.ContinuePending:
		return "continue pending"
	case svc.PausePending:
		return "pause pending"
	case svc.Paused:
		return "paused"
	}
	return fmt.Sprintf("in state %d", state)
}

// ProtectedDirs are Program Files (and its 32-bit sibling), from the
// shell's known folders rather than the environment, which whoever starts
// tickscope chooses.
func (bootService) ProtectedDirs() ([]string, error) {
	var dirs []string
	for _, id := range []*windows.KNOWNFOLDERID{windows.FOLDERID_ProgramFiles, windows.FOLDERID_ProgramFilesX86} {
		dir, err := windows.KnownFolderPath(id, 0)
		if err != nil {
			return nil, &seam.OSError{Call: "SHGetKnownFolderPath(Program Files)", Err: err}
		}
		dirs = append(dirs, dir)
	}
	return dirs, nil
}

// RunService runs serve under the service manager
// (StartServiceCtrlDispatcherW, through golang.org/x/sys/windows/svc),
// with its lines going to the Application event log under name. The
// source is not registered (that would be one more thing to install and
// remove), so Event Viewer shows each line after a note that the source's
// message file is missing.
func (system) RunService(name string, serve func(ctx context.Context, run seam.ServiceRun) error) error {
	handler := &serviceHandler{serve: serve, log: func(string, string) {}}
	if events, err := eventlog.Open(name); err == nil {
		defer events.Close()
		handler.log = func(level, msg string) {
			switch level {
			case "error":
				events.Error(3, msg)
			case "warning":
				events.Warning(2, msg)
			default:
				events.Info(1, msg)
			}
		}
	}
	if err := svc.Run(name, handler); err != nil {
		if errors.Is(err, windows.ERROR_FAILED_SERVICE_CONTROLLER_CONNECT) {
			return fmt.Errorf("this process was not started by the service manager (StartServiceCtrlDispatcherW: %w): this command line is the %s service's own", err, name)
		}
		return &seam.OSError{Call: "StartServiceCtrlDispatcherW", Err: err}
	}
	return handler.err
}

// serviceHandler answers the service manager for serve: it reports the
// service starting until serve says it runs, then running and accepting
// Stop and Shutdown, either of which ends serve's context; it answers
// Interrogate with the state it last reported.
type serviceHandler struct {
	serve func(ctx context.Context, run seam.ServiceRun) error
	log   func(level, msg string)
	err   error
}

// serviceStartHint and serviceStopHint are the waits the handler asks the
// service manager for while it starts (the hold measures its setting
// briefly first) and stops.
const (
	serviceStartHint = 30 * time.Second
	serviceStopHint  = 10 * time.Second
)

func (h *serviceHandler) Execute(_ []string, requests <-chan svc.ChangeRequest, status chan<- svc.Status) (serviceSpecific bool, exitCode uint32) {
	current := svc.Status{State: svc.StartPending, WaitHint: uint32(serviceStartHint / time.Millisecond)}
	status <- current
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	running := make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		done <- h.serve(ctx, seam.ServiceRun{Running: func() { once.Do(func() { close(running) }) }, Log: h.log})
	}()
	for {
		select {
		case <-running:
			running = nil
			current = svc.Status{State: svc.Running, Accepts: svc.AcceptStop | svc.AcceptShutdown}
			status <- current
		case h.err = <-done:
			if h.err != nil {
				return true, 1
			}
			return false, 0
		case r := <-requests:
			switch r.Cmd {
			case svc.Interrogate:
				status <- current
			case svc.Stop, svc.Shutdown:
				current = svc.Status{State: svc.StopPending, WaitHint: uint32(serviceStopHint / time.Millisecond)}
				status <- current
				stop()
			}
		}
	}
}
