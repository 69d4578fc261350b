package startup_test

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/timerstate"
)

type windowsHost struct {
	*sim.Host
	build   uint32
	global  *uint32
	current uint32
}

func (h *windowsHost) Query() (*timerinfo.Report, error) {
	q, err := h.Host.Query()
	if err != nil {
		return nil, err
	}
	if h.build != 0 {
		q.Windows.Build = h.build
		q.Windows.Version = "10.0." + strconv.FormatUint(uint64(h.build), 10)
		q.Windows.Product = timerinfo.WindowsProduct(10, 0, h.build, false)
	}
	if h.global != nil {
		q.Windows.GlobalTimerResolutionRequests = h.global
	}
	if h.current != 0 {
		q.Windows.Current100ns = h.current
	}
	q.Windows.RequestModel = timerinfo.RequestModelFor(q.Windows.Build, q.Windows.GlobalTimerResolutionRequests)
	return q, nil
}

func newWindows(t *testing.T, scenario string) *windowsHost {
	t.Helper()
	h, err := sim.NewHost(scenario, 1)
	if err != nil {
		t.Fatal(err)
	}
	return &windowsHost{Host: h}
}

func query(t *testing.T, h seam.Host) *timerinfo.Report {
	t.Helper()
	q, err := h.Query()
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func one() *uint32 { v := uint32(1); return &v }

func linuxReport(us int32) *timerinfo.Report {
	return &timerinfo.Report{OS: "linux", Linux: &timerinfo.Linux{CPUDMALatencyUs: &us}}
}

type linuxHost struct {
	seam.Host
	dma int32
}

func (h *linuxHost) Query() (*timerinfo.Report, error) { return linuxReport(h.dma), nil }

func wantError(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want one containing %q", err, want)
	}
}

func isUsage(err error) bool {
	var usage *options.UsageError
	return errors.As(err, &usage)
}

func taskOf(t *testing.T, exe string, ours bool) []byte {
	t.Helper()
	description := "someone else's task"
	if ours {
		description = "Holds 1 ms. " + persist.Marker("0.1.0")
	}
	data, err := persist.TaskXML(persist.Task{Exe: exe, Args: []string{"apply", "--ms", "1"}, Description: description, DelaySeconds: 15})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

const windowsExe = `C:\Tools\tickscope.exe`

const windowsHolder = `C:\Tools\tickscope-holder.exe`

func persistMachine(t *testing.T) (*windowsHost, *sim.System, *sim.Startup) {
	h := newWindows(t, "knee-26100")
	h.global = one()
	sys := &sim.System{Exe: windowsExe, Temp: `C:\Users\me\AppData\Local\Temp`, Env: map[string]string{"APPDATA": `C:\Users\me\AppData\Roaming`}}
	return h, sys, sys.NewStartup("Task Scheduler task tickscope")
}

const bootExe = `C:\Program Files\tickscope\tickscope.exe`

var bootArgs = []string{"holder", "--as-service", "--resolution", "10000", "--no-esc"}

func bootMachine(t *testing.T) (*windowsHost, *sim.System, *sim.Service) {
	h, sys, _ := persistMachine(t)
	sys.Exe, sys.IsElevated = bootExe, true
	return h, sys, sys.NewBootService("Windows service tickscope")
}

func serviceOf(exe string, ours bool) []byte {
	description := "someone else's service"
	if ours {
		description = "Holds 1 ms from boot. " + persist.Marker("0.1.0")
	}
	return []byte(persist.ServiceText(persist.BootService(exe, []string{"apply", "--resolution", "10000", "--no-esc", "--as-service"}, description)))
}

func (u *unrestrictingService) Install(definition []byte) error {
	s, err := persist.ParseService(string(definition))
	if err != nil {
		return err
	}
	s.Privileges = nil
	return u.Service.Install([]byte(persist.ServiceText(s)))
}

type bootSystem struct {
	*sim.System
	sv seam.Service
}

func (b *bootSystem) BootService() seam.Service { return b.sv }

func (s *subsystemErr) ExeSubsystem(string) (uint16, error) { return 0, s.err }

// holderLog is the holder's log in sys's state directory.
func holderLog(t *testing.T, sys seam.System) string {
	t.Helper()
	dir, err := sys.StateDir()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, timerstate.HolderLogName)
}
