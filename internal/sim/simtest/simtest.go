// Package simtest is what the use cases' tests share on the model of
// Windows timers: the model seen through a query a test can change, and
// the reports they plan for.
package simtest

import (
	"strconv"
	"testing"

	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// WindowsHost is the model of Windows timers, seen through a query that
// can be changed: the build, the global value, and the period in force (a
// holder started elsewhere). Zero values leave the model's own.
type WindowsHost struct {
	*sim.Host
	Build   uint32
	Global  *uint32
	Current uint32
}

// Query is the model's query with the host's changes, and the request
// model that follows from its build and global value.
func (h *WindowsHost) Query() (*timerinfo.Report, error) {
	q, err := h.Host.Query()
	if err != nil {
		return nil, err
	}
	if h.Build != 0 {
		q.Windows.Build = h.Build
		q.Windows.Version = "10.0." + strconv.FormatUint(uint64(h.Build), 10)
		q.Windows.Product = timerinfo.WindowsProduct(10, 0, h.Build, false)
	}
	if h.Global != nil {
		q.Windows.GlobalTimerResolutionRequests = h.Global
	}
	if h.Current != 0 {
		q.Windows.Current100ns = h.Current
	}
	q.Windows.RequestModel = timerinfo.RequestModelFor(q.Windows.Build, q.Windows.GlobalTimerResolutionRequests)
	return q, nil
}

// NewWindows is the model of scenario (seed 1), unchanged.
func NewWindows(t testing.TB, scenario string) *WindowsHost {
	t.Helper()
	h, err := sim.NewHost(scenario, 1)
	if err != nil {
		t.Fatal(err)
	}
	return &WindowsHost{Host: h}
}

// Query is h's query, failing the test on an error.
func Query(t testing.TB, h seam.Host) *timerinfo.Report {
	t.Helper()
	q, err := h.Query()
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// One is a GlobalTimerResolutionRequests value of 1 (on).
func One() *uint32 { v := uint32(1); return &v }

// LinuxReport is a Linux machine's query with cpu_dma_latency at us.
func LinuxReport(us int32) *timerinfo.Report {
	return &timerinfo.Report{OS: "linux", Linux: &timerinfo.Linux{CPUDMALatencyUs: &us}}
}

// The startup holder's machine and files on the model, which startup's
// and inspect's tests share.
const (
	// WindowsExe is tickscope.exe outside Program Files.
	WindowsExe = `C:\Tools\tickscope.exe`
	// WindowsHolder is the windowless holder beside WindowsExe, which the
	// logon task runs.
	WindowsHolder = `C:\Tools\tickscope-holder.exe`
	// BootExe is tickscope.exe where --persist --boot accepts it: under
	// Program Files, which the fake's boot service protects.
	BootExe = `C:\Program Files\tickscope\tickscope.exe`
)

// TaskOf is a task definition for exe, tickscope's (with its marker) or
// not.
func TaskOf(t testing.TB, exe string, ours bool) []byte {
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

// PersistMachine is a Windows machine whose requests are global, with
// the Task Scheduler task mechanism and nothing installed.
func PersistMachine(t testing.TB) (*WindowsHost, *sim.System, *sim.Startup) {
	h := NewWindows(t, "knee-26100")
	h.Global = One()
	sys := &sim.System{Exe: WindowsExe, Temp: `C:\Users\me\AppData\Local\Temp`, Env: map[string]string{"APPDATA": `C:\Users\me\AppData\Roaming`}}
	return h, sys, sys.NewStartup("Task Scheduler task tickscope")
}
