package hold_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/sim/simtest"

	"github.com/tickscope/tickscope/internal/hold"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

var bootArgs = []string{"holder", "--as-service", "--resolution", "10000", "--no-esc"}

// The refusals of apply --persist --boot: each changes nothing (no
// install, no start, no stop), and each but the usage errors is an OS-side
// refusal (exit 1).
// The flags: --boot only with --persist, not on Linux (its unit starts at
// boot already), and --as-service alone; with --persist --boot the service
// runs apply --as-service with no console flags.
func TestPlanApplyBoot(t *testing.T) {
	win := simtest.Query(t, simtest.NewWindows(t, "knee-26100"))
	lin := simtest.LinuxReport(timerinfo.DMALatencyDefaultUs)
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
	h := simtest.NewWindows(t, "knee-26100")
	h.Global = simtest.One()
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

// A reinstall that fails leaves the service that ran before running: it
// was stopped only to be replaced. The error says what happened to it.
