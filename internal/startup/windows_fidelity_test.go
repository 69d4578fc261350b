package startup_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/startup"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// Where the startup holder's rules meet Windows' own: the task's user,
// the request model of the running boot, and the warning that the timer
// is still raised after the holder was removed (TickTune's rule). Real
// Windows is not run here.

// wfSystem is the in-memory System with a user, as the Windows System has.
type wfSystem struct {
	*sim.System
	sid    string
	sidErr error
}

func (s *wfSystem) UserSID() (string, error) { return s.sid, s.sidErr }

// wfHost is the model with the period in force set by the test.
type wfHost struct {
	*sim.Host
	current uint32
}

func (h *wfHost) Query() (*timerinfo.Report, error) {
	q, err := h.Host.Query()
	if err == nil && h.current != 0 {
		q.Windows.Current100ns = h.current
	}
	return q, err
}

func wfMachine(t *testing.T) (*wfHost, *wfSystem) {
	t.Helper()
	h, err := sim.NewHost("knee-26100", 1)
	if err != nil {
		t.Fatal(err)
	}
	sys := &wfSystem{System: &sim.System{Exe: `C:\Tools\tickscope.exe`, Temp: `C:\Users\me\AppData\Local\Temp`}, sid: "S-1-5-21-1004336348-1177238915-682003330-512"}
	sys.NewStartup("Task Scheduler task tickscope")
	return &wfHost{Host: h}, sys
}

// wfQuery is the model's report with a request model: 26100 with the key
// set, written after boot or not.
func wfQuery(t *testing.T, h *wfHost, writtenAfterBoot bool) *timerinfo.Report {
	t.Helper()
	q, err := h.Query()
	if err != nil {
		t.Fatal(err)
	}
	one := uint32(1)
	q.Windows.Build, q.Windows.GlobalTimerResolutionRequests, q.Windows.KernelKeyWrittenAfterBoot = 26100, &one, writtenAfterBoot
	q.Windows.RequestModel = timerinfo.RunningRequestModel(26100, &one, writtenAfterBoot)
	return q
}

func TestPersistTaskNamesTheUser(t *testing.T) {
	h, sys := wfMachine(t)
	res, err := startup.Persist(h, sys, wfQuery(t, h, false), timerinfo.Setting{Resolution100ns: 5000},
		[]string{"apply", "--resolution", "5000"}, startup.PersistOptions{Version: "test", DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(res.Definition, "<UserId>"+sys.sid+"</UserId>"); n != 2 {
		t.Errorf("the task names the user %d times, want 2 (LogonTrigger and Principal):\n%s", n, res.Definition)
	}
	in, err := persist.ParseTask([]byte(res.Definition))
	if err != nil || in.LogonUserID != sys.sid || in.PrincipalUserID != sys.sid {
		t.Errorf("ParseTask read back %+v, %v", in, err)
	}

	sys.sidErr = errors.New("Access is denied.")
	_, err = startup.Persist(h, sys, wfQuery(t, h, false), timerinfo.Setting{Resolution100ns: 5000},
		[]string{"apply", "--resolution", "5000"}, startup.PersistOptions{Version: "test", DryRun: true})
	if err == nil || !strings.Contains(err.Error(), "TokenUser") {
		t.Errorf("a user that cannot be read: %v, want an error naming the call", err)
	}
}

func TestPersistRefusedUntilTheKeyIsInForce(t *testing.T) {
	h, sys := wfMachine(t)
	_, err := startup.Persist(h, sys, wfQuery(t, h, true), timerinfo.Setting{Resolution100ns: 5000},
		[]string{"apply", "--resolution", "5000"}, startup.PersistOptions{Version: "test", DryRun: true})
	if err == nil || !strings.Contains(err.Error(), "after a reboot") || !strings.Contains(err.Error(), "verify-global") {
		t.Errorf("--persist with the key written after boot: %v, want a refusal naming the reboot and verify-global", err)
	}
}

func TestRemoveStartupWarnsOnlyAtOrBelowTheHoldersPeriod(t *testing.T) {
	tests := []struct {
		name    string
		holds   []string
		current uint32
		raised  bool
	}{
		{"a browser at 1 ms after a 0.5 ms holder", []string{"apply", "--resolution", "5000"}, 10000, false},
		{"still 0.5 ms after a 0.5 ms holder", []string{"apply", "--resolution", "5000"}, 4992, true},
		{"0.5 ms after a 1 ms holder", []string{"apply", "--ms", "1"}, 5000, true},
		{"at rest", []string{"apply", "--ms", "1"}, 156250, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, sys := wfMachine(t)
			h.current = tt.current
			definition, err := persist.TaskXML(persist.Task{Exe: `C:\Tools\tickscope.exe`, Args: tt.holds, Description: persist.Marker("test"), UserSID: sys.sid})
			if err != nil {
				t.Fatal(err)
			}
			sys.StartupMechanism.Definition = definition
			res, err := startup.RemoveStartup(h, sys)
			if err != nil {
				t.Fatal(err)
			}
			if (res.StillRaised != "") != tt.raised {
				t.Errorf("StillRaised = %q, want raised %v", res.StillRaised, tt.raised)
			}
		})
	}
}

// TestPersistSaysWhoseLogonWhenElevated: the task names the token's user;
// from an elevated terminal that may be an administrator, not the person
// at the keyboard, and the result says so.
func TestPersistSaysWhoseLogonWhenElevated(t *testing.T) {
	for _, elevated := range []bool{false, true} {
		h, sys := wfMachine(t)
		sys.IsElevated = elevated
		res, err := startup.Persist(h, sys, wfQuery(t, h, false), timerinfo.Setting{Resolution100ns: 5000},
			[]string{"apply", "--resolution", "5000"}, startup.PersistOptions{Version: "test", DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.ElevatedUser != elevated {
			t.Errorf("elevated %v: ElevatedUser %v", elevated, res.ElevatedUser)
		}
	}
}
