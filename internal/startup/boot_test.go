package startup_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/sim/simtest"

	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/startup"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

func persistBoot(t *testing.T, h *simtest.WindowsHost, sys *sim.System, o startup.PersistOptions) (*startup.PersistResult, error) {
	t.Helper()
	o.Boot, o.Version = true, "test"
	if o.Sleep == nil {
		o.Sleep = func(time.Duration) {}
	}
	return startup.Persist(h, sys, simtest.Query(t, h), timerinfo.Setting{Resolution100ns: 10000}, bootArgs, o)
}

func TestPersistBootRefusals(t *testing.T) {
	tests := []struct {
		name   string
		dryRun bool
		setUp  func(h *simtest.WindowsHost, sys *sim.System, sv *sim.Service)
		want   string
	}{
		{"not elevated", false, func(_ *simtest.WindowsHost, sys *sim.System, _ *sim.Service) { sys.IsElevated = false },
			"--persist --boot installs a Windows service, which needs an elevated tickscope: run it from a terminal opened with Run as administrator (nothing was changed"},
		{"per-process requests (Windows 11 without the key)", false, func(h *simtest.WindowsHost, _ *sim.System, _ *sim.Service) { h.Global = nil },
			"--persist refused: requests are per-process here (per-process: Windows 10 2004+), so a service at boot would speed up only itself"},
		{"per-process requests, a dry run too", true, func(h *simtest.WindowsHost, _ *sim.System, _ *sim.Service) { h.Global = nil },
			"so a service at boot would speed up only itself"},
		{"per-process requests, not elevated: the machine's refusal first", false, func(h *simtest.WindowsHost, sys *sim.System, _ *sim.Service) {
			h.Global, sys.IsElevated = nil, false
		}, "so a service at boot would speed up only itself"},
		{"Windows 10, which ignores the key", false, func(h *simtest.WindowsHost, _ *sim.System, _ *sim.Service) { h.Build = 19045 },
			"this build cannot make them global"},
		{"a foreign service of that name", false, func(_ *simtest.WindowsHost, _ *sim.System, sv *sim.Service) {
			sv.Definition = serviceOf(`C:\tools\TimerResolution.exe`, false)
			sv.Now = seam.ServiceState{State: "running", PID: 9}
		}, "a Windows service tickscope exists that tickscope did not create: it is left alone; delete it by hand with: delete Windows service tickscope by hand"},
		{"a foreign service, a dry run too", true, func(_ *simtest.WindowsHost, _ *sim.System, sv *sim.Service) {
			sv.Definition = serviceOf(`C:\tools\TimerResolution.exe`, false)
		}, "that tickscope did not create"},
		{"an unreadable service definition", false, func(_ *simtest.WindowsHost, _ *sim.System, sv *sim.Service) {
			sv.Definition = []byte("SERVICE_NAME        : tickscope\n")
		}, "that tickscope did not create"},
		{"the service manager cannot be read", false, func(_ *simtest.WindowsHost, _ *sim.System, sv *sim.Service) {
			sv.ReadErr = errors.New("OpenSCManagerW: access denied")
		}, "access denied"},
		{"outside Program Files", false, func(_ *simtest.WindowsHost, sys *sim.System, _ *sim.Service) { sys.Exe = `C:\Tools\tickscope.exe` },
			`--persist --boot refused: the service would run C:\Tools\tickscope.exe as NT AUTHORITY\LocalService at every boot, and a folder outside C:\Program Files may let non-administrators replace it`},
		{"a look-alike of Program Files", false, func(_ *simtest.WindowsHost, sys *sim.System, _ *sim.Service) {
			sys.Exe = `C:\Program Fileſ\tickscope\tickscope.exe`
		}, "copy tickscope.exe into C:\\Program Files\\tickscope"},
		{"out of Program Files by ..", false, func(_ *simtest.WindowsHost, sys *sim.System, _ *sim.Service) {
			sys.Exe = `C:\Program Files\..\Users\me\tickscope.exe`
		}, "may let non-administrators replace it"},
		{"Program Files unknown", false, func(_ *simtest.WindowsHost, _ *sim.System, sv *sim.Service) {
			sv.DirsErr = errors.New("SHGetKnownFolderPath failed")
		}, "SHGetKnownFolderPath failed"},
		{"go run's build", false, func(_ *simtest.WindowsHost, sys *sim.System, _ *sim.Service) {
			sys.Exe = filepath.Join(sys.Temp, "go-build1", "b001", "exe", "tickscope.exe")
		}, "is a temporary build (go run)"},
		{"no service mechanism", false, func(_ *simtest.WindowsHost, sys *sim.System, _ *sim.Service) { sys.BootServiceMechanism = nil },
			"not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, sys, sv := bootMachine(t)
			tt.setUp(h, sys, sv)
			before := string(sv.Definition)
			res, err := persistBoot(t, h, sys, startup.PersistOptions{DryRun: tt.dryRun})
			if res != nil {
				t.Errorf("refused with a result: %+v", res)
			}
			wantError(t, err, tt.want)
			if isUsage(err) {
				t.Errorf("%v is a usage error (exit 2), want exit 1", err)
			}
			if sv.Installs+sv.Starts+sv.Stops+sv.Deletes != 0 || string(sv.Definition) != before {
				t.Errorf("a refusal changed the service: %d installs, %d starts, %d stops, %d deletes", sv.Installs, sv.Starts, sv.Stops, sv.Deletes)
			}
			if st := sys.StartupMechanism; st.Installs+st.Starts != 0 {
				t.Errorf("a refusal touched the logon task")
			}
		})
	}
}

func TestPersistBootInstallsAndStarts(t *testing.T) {
	tests := []struct {
		name        string
		setUp       func(h *simtest.WindowsHost, sys *sim.System, sv *sim.Service)
		onStart     func(h *simtest.WindowsHost, sv *sim.Service)
		wantRunning bool
		wantStops   int
		wantWarning string
	}{
		{"fresh", nil, func(h *simtest.WindowsHost, _ *sim.Service) { h.Current = 10000 }, true, 0, ""},
		{"replaces its own running service, stopped first", func(_ *simtest.WindowsHost, _ *sim.System, sv *sim.Service) {
			sv.Definition = serviceOf(`C:\Program Files\old\tickscope.exe`, true)
			sv.Now = seam.ServiceState{State: "running", PID: 7}
		}, func(h *simtest.WindowsHost, _ *sim.Service) { h.Current = 10000 }, true, 1, ""},
		{"the service stops instead of holding", nil, func(_ *simtest.WindowsHost, sv *sim.Service) {
			sv.Now = seam.ServiceState{State: "stopped", ExitCode: 1, ServiceSpecific: true}
		}, false, 0, "the service stopped instead of holding (service-specific exit code 1): its reason is in the Application event log, source tickscope"},
		{"running, the setting not in force", nil, func(h *simtest.WindowsHost, _ *sim.Service) { h.Current = 156250 }, false, 0,
			"the setting did not appear within 10 s of starting the service"},
		{"start fails", func(_ *simtest.WindowsHost, _ *sim.System, sv *sim.Service) {
			sv.StartErr = errors.New("StartServiceW: the account name is invalid")
		},
			nil, false, 0, "starting it now failed: StartServiceW: the account name is invalid (it will start at the next boot)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, sys, sv := bootMachine(t)
			if tt.setUp != nil {
				tt.setUp(h, sys, sv)
			}
			if tt.onStart != nil {
				sv.OnStart = func() { tt.onStart(h, sv) }
			}
			res, err := persistBoot(t, h, sys, startup.PersistOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Running != tt.wantRunning || sv.Stops != tt.wantStops || sv.Installs != 1 {
				t.Errorf("Persist = %+v; %d stops, %d installs", res, sv.Stops, sv.Installs)
			}
			if tt.wantRunning && res.PID != 4242 {
				t.Errorf("pid %d, want the service's 4242", res.PID)
			}
			installed, err := persist.ParseService(string(sv.Definition))
			if err != nil {
				t.Fatal(err)
			}
			if exe, args := installed.Words(); exe != simtest.BootExe || strings.Join(args, " ") != strings.Join(bootArgs, " ") ||
				installed.Account != `NT AUTHORITY\LocalService` || !installed.Installed().Ours() || installed.StartType != persist.SERVICE_AUTO_START {
				t.Errorf("installed %+v", installed)
			}
			if res.When != "boot" || res.Account != `NT AUTHORITY\LocalService` || res.Startup != "Windows service tickscope" || res.ElevatedUser {
				t.Errorf("result %+v", res)
			}
			if st := sys.StartupMechanism; st.Installs+st.Starts != 0 {
				t.Error("--boot touched the logon task")
			}
			warnings := strings.Join(startup.PersistWarnings(res), "\n")
			if (tt.wantWarning == "") != (warnings == "") || !strings.Contains(warnings, tt.wantWarning) {
				t.Errorf("warnings %q, want %q", warnings, tt.wantWarning)
			}
		})
	}
}

func TestPersistBootDryRun(t *testing.T) {
	h, sys, sv := bootMachine(t)
	sys.IsElevated = false
	sv.Definition = serviceOf(`C:\Program Files\old\tickscope.exe`, true)
	sv.Now = seam.ServiceState{State: "running", PID: 7}
	res, err := persistBoot(t, h, sys, startup.PersistOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`BINARY_PATH_NAME    : "C:\Program Files\tickscope\tickscope.exe" holder --as-service --resolution 10000 --no-esc`,
		`SERVICE_START_NAME  : NT AUTHORITY\LocalService`,
		"START_TYPE          : AUTO_START",
		"[tickscope holder, build test]",
	} {
		if !strings.Contains(res.Definition, want) {
			t.Errorf("the dry run lacks %q:\n%s", want, res.Definition)
		}
	}
	if len(res.Notes) != 1 || res.Notes[0] != "installing it needs an elevated tickscope" {
		t.Errorf("notes %q", res.Notes)
	}
	if sv.Installs+sv.Starts+sv.Stops != 0 || sv.Now.State != "running" {
		t.Errorf("a dry run changed the service")
	}
}

func TestPersistBootSaysWhenPrivilegesAreNotRestricted(t *testing.T) {
	h, sys, sv := bootMachine(t)
	sv.OnStart = func() { h.Current = 10000 }
	res, err := persistBoot(t, h, sys, startup.PersistOptions{})
	if err != nil || len(res.Notes) != 0 {
		t.Fatalf("with the list kept: %+v, %v", res, err)
	}
	h, sys, sv = bootMachine(t)
	sv.OnStart = func() { h.Current = 10000 }
	unrestricted := &unrestrictingService{Service: sv}
	sys.BootServiceMechanism = nil
	res, err = startup.Persist(h, &bootSystem{System: sys, sv: unrestricted}, simtest.Query(t, h), timerinfo.Setting{Resolution100ns: 10000}, bootArgs,
		startup.PersistOptions{Boot: true, Version: "test", Sleep: func(time.Duration) {}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], `the service manager keeps no list of required privileges here, so the service has all of NT AUTHORITY\LocalService's privileges, not only SeChangeNotifyPrivilege`) {
		t.Errorf("notes %q", res.Notes)
	}
}

// unrestrictingService is a service manager that drops the privilege list
// it is given, as Wine's does.
type unrestrictingService struct{ *sim.Service }

func TestInsideDir(t *testing.T) {
	for _, tt := range []struct {
		path, dir string
		want      bool
	}{
		{`C:\Program Files\tickscope\tickscope.exe`, `C:\Program Files`, true},
		{`c:\program files\tickscope\tickscope.exe`, `C:\Program Files`, true},
		{`C:/Program Files/tickscope.exe`, `C:\Program Files\`, true},
		{`C:\Program Files (x86)\tickscope.exe`, `C:\Program Files`, false},
		{`C:\Program Files`, `C:\Program Files`, false},
		{`C:\Program FilesX\tickscope.exe`, `C:\Program Files`, false},
		{`C:\Program Fileſ\tickscope.exe`, `C:\Program Files`, false},
		{`C:\Program Files\..\tickscope.exe`, `C:\Program Files`, false},
		{`C:\Program Files\.\tickscope.exe`, `C:\Program Files`, false},
		{`C:\Program Files\\tickscope.exe`, `C:\Program Files`, false},
		{`\\?\C:\Program Files\tickscope.exe`, `C:\Program Files`, false},
		{`\\server\share\Program Files\tickscope.exe`, `C:\Program Files`, false},
		{`D:\Program Files\tickscope.exe`, `C:\Program Files`, false},
		{`C:\Program Files\tickscope.exe`, ``, false},
	} {
		if got := startup.InsideDir(tt.path, tt.dir); got != tt.want {
			t.Errorf("InsideDir(%q, %q) = %v, want %v", tt.path, tt.dir, got, tt.want)
		}
	}
}

func TestRemoveStartupWithTheBootService(t *testing.T) {
	const (
		needsElevation = "the Windows service tickscope is installed, and stopping and deleting a service needs an elevated tickscope: it is left as it was; run startup remove from a terminal opened with Run as administrator to remove it"
		foreign        = "the Windows service tickscope was not created by tickscope: it is left alone; delete it by hand, elevated, with: delete Windows service tickscope by hand"
	)
	tests := []struct {
		name     string
		elevated bool
		task     []byte
		service  []byte
		state    seam.ServiceState
		want     startup.ServiceRemoval
		wantTask bool // the task was deleted
	}{
		{"nothing", false, nil, nil, seam.ServiceState{}, startup.ServiceRemoval{}, false},
		{"running", true, nil, serviceOf(simtest.BootExe, true), seam.ServiceState{State: "running", PID: 31},
			startup.ServiceRemoval{Installed: true, PID: 31, Stopped: true, Deleted: true}, false},
		{"stopped", true, nil, serviceOf(simtest.BootExe, true), seam.ServiceState{State: "stopped", ExitCode: 1, ServiceSpecific: true},
			startup.ServiceRemoval{Installed: true, Deleted: true}, false},
		{"and the logon task", true, simtest.TaskOf(t, simtest.WindowsHolder, true), serviceOf(simtest.BootExe, true), seam.ServiceState{State: "running", PID: 31},
			startup.ServiceRemoval{Installed: true, PID: 31, Stopped: true, Deleted: true}, true},
		{"not elevated: the task removed, the service left", false, simtest.TaskOf(t, simtest.WindowsHolder, true), serviceOf(simtest.BootExe, true), seam.ServiceState{State: "running", PID: 31},
			startup.ServiceRemoval{Left: needsElevation}, true},
		{"not elevated, no task: the service left", false, nil, serviceOf(simtest.BootExe, true), seam.ServiceState{State: "running", PID: 31},
			startup.ServiceRemoval{Left: needsElevation}, false},
		{"not elevated, no service: the task removed", false, simtest.TaskOf(t, simtest.WindowsHolder, true), nil, seam.ServiceState{},
			startup.ServiceRemoval{}, true},
		{"a foreign service: the task removed, the service left", true, simtest.TaskOf(t, simtest.WindowsHolder, true), serviceOf(`C:\tools\TimerResolution.exe`, false), seam.ServiceState{State: "running", PID: 31},
			startup.ServiceRemoval{Left: foreign}, true},
		{"a foreign service, not elevated: the task removed", false, simtest.TaskOf(t, simtest.WindowsHolder, true), serviceOf(`C:\tools\TimerResolution.exe`, false), seam.ServiceState{State: "running", PID: 31},
			startup.ServiceRemoval{Left: foreign}, true},
		{"an unreadable service definition is not tickscope's", true, nil, []byte("SERVICE_NAME        : tickscope\n"), seam.ServiceState{State: "stopped"},
			startup.ServiceRemoval{Left: foreign}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, sys, sv := bootMachine(t)
			h.Global = nil
			sys.IsElevated = tt.elevated
			st := sys.StartupMechanism
			st.Definition, sv.Definition, sv.Now = tt.task, tt.service, tt.state
			res, err := startup.RemoveStartup(h, sys)
			if err != nil {
				t.Fatal(err)
			}
			tt.want.Service = "Windows service tickscope"
			if res.Service == nil || *res.Service != tt.want {
				t.Errorf("service removal %+v, want %+v", res.Service, tt.want)
			}
			if res.NotDone() != tt.want.Left {
				t.Errorf("not done %q, want %q", res.NotDone(), tt.want.Left)
			}
			if res.Deleted != tt.wantTask || (st.Definition == nil) != (tt.wantTask || tt.task == nil) {
				t.Errorf("task deleted %v, want %v", res.Deleted, tt.wantTask)
			}
			switch {
			case tt.want.Installed && (sv.Definition != nil || sv.Now.State != ""):
				t.Errorf("the service is still there: %+v", sv.Now)
			case !tt.want.Installed && (sv.Stops+sv.Deletes != 0 || sv.Now != tt.state || string(sv.Definition) != string(tt.service)):
				t.Errorf("a service left alone was changed: %d stops, %d deletes, %+v", sv.Stops, sv.Deletes, sv.Now)
			}
		})
	}
}

func TestPersistBootFailedReinstallRestartsTheOldService(t *testing.T) {
	for _, tt := range []struct {
		name       string
		running    bool
		startErr   error
		want       string
		wantStarts int
		wantState  string
	}{
		{"running before: started again", true, nil,
			"CreateServiceW: access denied; the service that ran before was started again", 1, "running"},
		{"running before, the restart fails", true, errors.New("StartServiceW: the service is disabled"),
			"CreateServiceW: access denied; the service that ran before was stopped to be replaced, and starting it again failed too: StartServiceW: the service is disabled", 0, "stopped"},
		{"stopped before: left stopped", false, nil, "CreateServiceW: access denied", 0, "stopped"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, sys, sv := bootMachine(t)
			old := serviceOf(`C:\Program Files\old\tickscope.exe`, true)
			sv.Definition = old
			sv.Now = seam.ServiceState{State: "stopped"}
			if tt.running {
				sv.Now = seam.ServiceState{State: "running", PID: 7}
			}
			sv.InstallErr = errors.New("CreateServiceW: access denied")
			sv.StartErr = tt.startErr
			res, err := persistBoot(t, h, sys, startup.PersistOptions{})
			if res != nil || err == nil || err.Error() != tt.want {
				t.Fatalf("Persist = %+v, %v; want the error %q", res, err, tt.want)
			}
			if !errors.Is(err, sv.InstallErr) {
				t.Errorf("%v does not wrap the install's error", err)
			}
			if sv.Starts != tt.wantStarts || sv.Now.State != tt.wantState || string(sv.Definition) != string(old) {
				t.Errorf("%d starts, the service %q; want %d starts, %q, and the old definition", sv.Starts, sv.Now.State, tt.wantStarts, tt.wantState)
			}
		})
	}
}
