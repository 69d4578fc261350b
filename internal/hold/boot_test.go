package hold_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/hold"
	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// bootExe is tickscope.exe where --persist --boot accepts it: under
// Program Files, which the fake's boot service protects.
const bootExe = `C:\Program Files\tickscope\tickscope.exe`

var bootArgs = []string{"holder", "--as-service", "--resolution", "10000", "--no-esc"}

// bootMachine is an elevated Windows machine whose requests are global,
// with the logon task and the boot service mechanisms and nothing
// installed, running bootExe.
func bootMachine(t *testing.T) (*windowsHost, *sim.System, *sim.Service) {
	h, sys, _ := persistMachine(t)
	sys.Exe, sys.IsElevated = bootExe, true
	return h, sys, sys.NewBootService("Windows service tickscope")
}

// serviceOf is a service definition for exe, tickscope's (with its marker)
// or not.
func serviceOf(exe string, ours bool) []byte {
	description := "someone else's service"
	if ours {
		description = "Holds 1 ms from boot. " + persist.Marker("0.1.0")
	}
	return []byte(persist.ServiceText(persist.BootService(exe, []string{"apply", "--resolution", "10000", "--no-esc", "--as-service"}, description)))
}

// The refusals of apply --persist --boot: each changes nothing (no
// install, no start, no stop), and each but the usage errors is an OS-side
// refusal (exit 1).
// The flags: --boot only with --persist, not on Linux (its unit starts at
// boot already), and --as-service alone; with --persist --boot the service
// runs apply --as-service with no console flags.
func TestPlanApplyBoot(t *testing.T) {
	win := query(t, newWindows(t, "knee-26100"))
	lin := linuxReport(timerinfo.DMALatencyDefaultUs)
	for _, tt := range []struct {
		name string
		q    *timerinfo.Report
		f    hold.ApplyFlags
		want string
	}{
		{"boot without persist", win, hold.ApplyFlags{MS: 1, MSSet: true, Boot: true}, "--boot says that --persist installs a service that holds from boot: give --persist too"},
		{"boot on Linux", lin, hold.ApplyFlags{DMALatencySet: true, Persist: true, Boot: true}, "--boot: on Linux the systemd unit --persist installs starts at boot already; give --persist alone"},
		{"as-service with persist", win, hold.ApplyFlags{MS: 1, MSSet: true, AsService: true, Persist: true}, "--as-service is the boot service's own command line"},
		{"as-service with for", win, hold.ApplyFlags{MS: 1, MSSet: true, AsService: true, For: time.Second, ForSet: true}, "not with --persist, --for"},
		{"as-service with as-startup", win, hold.ApplyFlags{MS: 1, MSSet: true, AsService: true, AsStartup: true}, "--as-startup"},
		{"as-service on the model", win, hold.ApplyFlags{MS: 1, MSSet: true, AsService: true, Simulated: true}, "not with --persist, --listen, --no-console or --as-service, which reach this machine"},
		{"boot with while", win, hold.ApplyFlags{MS: 1, MSSet: true, Persist: true, Boot: true, While: "game.exe", WhileSet: true}, "--boot and --while game.exe: the boot service holds from boot"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := hold.PlanApply(tt.q, tt.f)
			if plan != nil || !isUsage(err) {
				t.Fatalf("PlanApply = %+v, %v; want a usage error", plan, err)
			}
			wantError(t, err, tt.want)
		})
	}
	plan, err := hold.PlanApply(win, hold.ApplyFlags{MS: 1, MSSet: true, Persist: true, Boot: true})
	if err != nil || plan.Kind != hold.InstallHolder || strings.Join(plan.HolderArgs, " ") != strings.Join(bootArgs, " ") {
		t.Errorf("--persist --boot: %+v, %v", plan, err)
	}
	plan, err = hold.PlanApply(win, hold.ApplyFlags{Resolution: 10000, ResolutionSet: true, NoEsc: true, AsService: true})
	if err != nil || plan.Kind != hold.ServeBoot || plan.Setting.Resolution100ns != 10000 {
		t.Errorf("the service's own command line: %+v, %v", plan, err)
	}
}

// The service holds under the service manager: it says it runs only once
// the setting is held, and the manager's Stop releases it.
func TestHoldAsService(t *testing.T) {
	h := newWindows(t, "knee-26100")
	h.global = one()
	sys := &sim.System{}
	var periodWhileRunning uint32
	sys.OnServiceRunning = func(stop func()) {
		periodWhileRunning = h.Observe().Current100ns
		stop()
	}
	if err := hold.HoldAsService(h, sys, timerinfo.Setting{Resolution100ns: 10000}); err != nil {
		t.Fatal(err)
	}
	if sys.ServedAs != "tickscope" || !sys.ServedRunning {
		t.Errorf("served as %q, running %v", sys.ServedAs, sys.ServedRunning)
	}
	if periodWhileRunning > 10000 || periodWhileRunning == 0 {
		t.Errorf("the period while the service ran: %d, want 10000 or finer", periodWhileRunning)
	}
	if now := h.Observe().Current100ns; now <= 10000 {
		t.Errorf("the period after the stop: %d, want it released", now)
	}
	log := strings.Join(sys.ServiceLog, "\n")
	for _, want := range []string{"info: holding 1.0000 ms (10000 x 100ns) (granted 0.9998 ms)", "as the tickscope service; it reaches every process", "info: released 1.0000 ms (10000 x 100ns) after 0s: the service manager stopped the service (0 re-applies)"} {
		if !strings.Contains(log, want) {
			t.Errorf("the service's log lacks %q:\n%s", want, log)
		}
	}
	// Started by anything but the service manager, it fails at once.
	sys = &sim.System{RunServiceErr: errors.New("this process was not started by the service manager")}
	if err := hold.HoldAsService(h, sys, timerinfo.Setting{Resolution100ns: 10000}); err == nil || sys.ServedRunning {
		t.Errorf("outside the service manager: %v, running %v", err, sys.ServedRunning)
	}
}

// startup remove stops the boot service (which releases its setting) and
// deletes it, elevated. A service of that name tickscope did not create,
// or tickscope's without elevation, is left as it was and said why
// (NotDone, exit 1), and the user's own logon task is removed all the same.
// status reads the boot service: installed, whose, what it runs and as
// whom, its state, how it last stopped, and stale when it runs another
// tickscope.exe than this one.
func TestStatusReadsTheBootService(t *testing.T) {
	tests := []struct {
		name       string
		definition []byte
		state      seam.ServiceState
		want       hold.StartupState
	}{
		{"nothing", nil, seam.ServiceState{}, hold.StartupState{}},
		{"running", serviceOf(bootExe, true), seam.ServiceState{State: "running", PID: 31},
			hold.StartupState{Installed: true, Ours: true, Exe: bootExe, Holds: "--resolution 10000", Running: true, PID: 31, State: "running", Account: `NT AUTHORITY\LocalService`}},
		{"stopped with an error", serviceOf(bootExe, true), seam.ServiceState{State: "stopped", ExitCode: 1, ServiceSpecific: true},
			hold.StartupState{Installed: true, Ours: true, Exe: bootExe, Holds: "--resolution 10000", State: "stopped", Exit: "service-specific exit code 1", Account: `NT AUTHORITY\LocalService`}},
		{"another tickscope.exe", serviceOf(`C:\Program Files\old\tickscope.exe`, true), seam.ServiceState{State: "stopped"},
			hold.StartupState{Installed: true, Ours: true, Exe: `C:\Program Files\old\tickscope.exe`, Holds: "--resolution 10000", State: "stopped", Stale: true, Account: `NT AUTHORITY\LocalService`}},
		{"foreign", serviceOf(`C:\tools\x.exe`, false), seam.ServiceState{State: "running", PID: 8},
			hold.StartupState{Installed: true, Exe: `C:\tools\x.exe`, Holds: "--resolution 10000", Running: true, PID: 8, State: "running", Stale: true, Account: `NT AUTHORITY\LocalService`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, sys, sv := bootMachine(t)
			sv.Definition, sv.Now = tt.definition, tt.state
			got := hold.ReadBootService(sys)
			got.Args = nil
			tt.want.Mechanism = "Windows service tickscope"
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("ReadBootService = %+v\nwant %+v", *got, tt.want)
			}
		})
	}
	if got := hold.ReadBootService(&sim.System{}); got != nil {
		t.Errorf("no boot service: %+v, want nil", got)
	}
}

// A reinstall that fails leaves the service that ran before running: it
// was stopped only to be replaced. The error says what happened to it.
