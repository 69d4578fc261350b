package inspect

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/timerstate"
	"github.com/tickscope/tickscope/internal/waitcheck"
)

// StatusReport is what status prints as JSON.
type StatusReport struct {
	Self    SelfCheck         `json:"self"`
	Query   *timerinfo.Report `json:"query"`
	Startup *StartupState     `json:"startup"`
	// BootService is the Windows service apply --persist --boot installs
	// (nil where the OS has none).
	BootService *StartupState `json:"boot_service"`
	// Diagnosis is why the waits here take what they take (Diagnose).
	Diagnosis *Diagnosis `json:"diagnosis"`
}

// SelfCheck is the default wait in this process without and with a
// request of its own.
type SelfCheck struct {
	Without     *waitcheck.Check  `json:"without_request"`
	WithSetting timerinfo.Setting `json:"with_setting"`
	With        *waitcheck.Check  `json:"with_request"`
}

// StartupState is the startup holder as status sees it.
type StartupState struct {
	Mechanism string `json:"mechanism"`
	Installed bool   `json:"installed"`
	// Ours is false for a definition of that name tickscope did not write.
	Ours  bool     `json:"ours"`
	Exe   string   `json:"exe,omitempty"`
	Args  []string `json:"args,omitempty"`
	Holds string   `json:"holds,omitempty"`
	// Stale is set when the definition runs another executable than this
	// tickscope's holder (HolderPath).
	Stale   bool `json:"stale"`
	Running bool `json:"running"`
	PID     int  `json:"pid,omitempty"`
	// While are the programs a holder with --while holds for, and HoldingFor their
	// processes running now as status's own scan sees them (the holder looks every
	// timerstate.ScanEvery, and may not yet have seen a start, or have failed to
	// take the setting; its state is not read).
	While      []string                    `json:"while,omitempty"`
	HoldingFor []timerstate.ProgramRunning `json:"holding_for,omitempty"`
	WhileError string                      `json:"while_error,omitempty"`
	// WhileSource is how the running holder with --while learns that a
	// program starts or exits: timerstate.SourceEvents while it listens to the
	// kernel's process events, timerstate.SourceScan otherwise (and on every OS
	// without them); "" when its descriptors could not be read.
	WhileSource string `json:"while_source,omitempty"`
	// InForce is whether, while the holder runs, the timer is at or finer
	// than what it holds (the holder's request, or another program's
	// finer one: the timer does not say whose).
	InForce bool `json:"in_force"`
	// Log is the last line of the windowless holder's log (Windows), ""
	// when it has none: that it holds, or why it stopped.
	Log string `json:"log,omitempty"`
	// State, Account and Exit are the boot service's: its state as the
	// service manager names it, the account it runs as, and how it last
	// stopped when that was not cleanly.
	State   string `json:"state,omitempty"`
	Account string `json:"account,omitempty"`
	Exit    string `json:"exit,omitempty"`
	Error   string `json:"error,omitempty"`
}

// The parts of the OS inspect's actions read (seam.System, which package
// platform implements and package sim fakes, has them all). The actions
// only read through them, though the startup and state-file roles they
// take could also change what they read.
type (
	// System is what status reads: the startup holder and the boot
	// service, the user, and who holds the timer.
	System interface {
		StartupSystem
		seam.User
		seam.HolderTracer
	}
	// StartupSystem is what reading the startup holder and the boot
	// service takes: their definitions, whether the holder runs, its log,
	// the programs it holds for and how it learns of them, and this
	// executable, which the definition should run.
	StartupSystem interface {
		seam.Autostart
		seam.HolderProbe
		seam.StateFiles
		seam.Programs
		seam.Self
	}
	// WhoSystem is what who reads: whether tickscope runs elevated, and
	// who holds the timer.
	WhoSystem interface {
		seam.User
		seam.HolderTracer
	}
)

// Status measures the default wait in this process without and with its
// own request (Windows: the finest period; Linux: timer slack 1 ns),
// queries the timer again with nothing held, reads the startup holder,
// and ends with the diagnosis: why the waits here take what they take
// (with who's holders where they can be read). It changes nothing.
func Status(ctx context.Context, host seam.Host, sys System) (*StatusReport, error) {
	q, err := host.Query()
	if err != nil {
		return nil, err
	}
	var rep StatusReport
	if rep.Self.Without, err = waitcheck.Measure(ctx, host, q, timerinfo.Setting{}); err != nil {
		return nil, err
	}
	switch {
	case q.Windows != nil:
		rep.Self.WithSetting = timerinfo.Setting{Resolution100ns: q.Windows.Finest100ns}
	case q.Linux != nil:
		rep.Self.WithSetting = timerinfo.Setting{SlackNs: 1}
	}
	throttling := ""
	if !rep.Self.WithSetting.IsZero() {
		if rep.Self.With, err = waitcheck.Measure(ctx, host, q, rep.Self.WithSetting); err != nil {
			return nil, err
		}
		throttling = host.Observe().TimerThrottling
	}
	// The query is taken again after the checks, with nothing held.
	if rep.Query, err = host.Query(); err != nil {
		return nil, err
	}
	var held timerinfo.Setting
	rep.Startup, held = readStartup(sys, rep.Query.Windows != nil)
	if s := rep.Startup; s != nil && s.Running && s.Ours && (len(s.While) == 0 || len(s.HoldingFor) > 0) {
		s.InForce = timerstate.InForce(rep.Query, held)
	}
	rep.BootService, held = readBootService(sys)
	if s := rep.BootService; s != nil && s.State == "running" && s.Ours {
		s.InForce = timerstate.InForce(rep.Query, held)
	}
	in := DiagnosisInput{Query: rep.Query, Self: rep.Self, Throttling: throttling}
	// Naming holders on Windows needs an elevated token (an ETW session).
	if rep.Query.Linux != nil || (rep.Query.Windows != nil && sys.Elevated()) {
		in.Holders, in.HoldersErr = sys.Holders(ctx)
	}
	rep.Diagnosis = Diagnose(in)
	return &rep, nil
}

// ReadStartup reads the startup holder's definition, whether it runs, and
// (Windows) its log's last line; nil where the OS has no startup
// mechanism. windows says how the OS compares paths and where the holder
// is.
func ReadStartup(sys StartupSystem, windows bool) *StartupState {
	s, _ := readStartup(sys, windows)
	return s
}

// ScanOnce lists the running processes of programs, once.
func ScanOnce(sys seam.Programs, programs []string) ([]timerstate.ProgramRunning, error) {
	scanner, err := sys.ScanPrograms(programs)
	if err != nil {
		return nil, err
	}
	defer scanner.Close()
	return timerstate.ScanRunning(scanner, programs)
}

// readStartup is ReadStartup, with the setting the definition holds.
func readStartup(sys StartupSystem, windows bool) (*StartupState, timerinfo.Setting) {
	st := sys.Startup()
	if st == nil {
		return nil, timerinfo.Setting{}
	}
	s := &StartupState{Mechanism: st.Describe()}
	s.PID, s.Running = sys.Holder()
	if windows {
		s.Log = timerstate.LastLogLine(sys)
	}
	definition, err := st.Read()
	if err != nil {
		s.Error = err.Error()
		return s, timerinfo.Setting{}
	}
	if definition == nil {
		return s, timerinfo.Setting{}
	}
	return s, fillDefinition(sys, s, definition, func(self string) string { return persist.HolderPath(self, windows) }, windows)
}

// fillDefinition fills s from an installed definition (and whether it
// runs another executable than holder(this executable)), and returns
// the setting it holds.
func fillDefinition(sys StartupSystem, s *StartupState, definition []byte, holder func(self string) string, windows bool) timerinfo.Setting {
	s.Installed = true
	installed, err := persist.ParseDefinition(definition)
	if err != nil {
		s.Error = err.Error()
		return timerinfo.Setting{}
	}
	s.Ours, s.Exe, s.Args, s.Holds = installed.Ours(), installed.Exe, installed.Args, installed.Setting()
	if s.While = installed.While(); s.While != nil && s.Running {
		if s.HoldingFor, err = ScanOnce(sys, s.While); err != nil {
			s.WhileError = fmt.Sprintf("looking for %s: %v", strings.Join(s.While, ", "), err)
		}
		s.WhileSource = whileSource(sys, s.PID)
	}
	if self, err := sys.Executable(); err == nil {
		s.Stale = !SamePath(holder(self), installed.Exe, windows)
	}
	return installed.HeldSetting()
}

// whileSource is how the holder pid learns that its programs start or
// exit (StartupState.WhileSource), "" when it cannot be told.
func whileSource(sys seam.Programs, pid int) string {
	if pid == 0 {
		return ""
	}
	listens, err := sys.ListensToProgramEvents(pid)
	switch {
	case errors.Is(err, seam.ErrUnsupported):
		return timerstate.SourceScan
	case err != nil:
		return ""
	case listens:
		return timerstate.SourceEvents
	}
	return timerstate.SourceScan
}

// ReadBootService reads the boot service as status shows it: its
// definition, its state and how it last stopped; nil where the OS has
// none.
func ReadBootService(sys StartupSystem) *StartupState {
	s, _ := readBootService(sys)
	return s
}

// readBootService is ReadBootService, with the setting the service holds.
// The service runs this tickscope.exe itself, not the windowless holder.
func readBootService(sys StartupSystem) (*StartupState, timerinfo.Setting) {
	sv := sys.BootService()
	if sv == nil {
		return nil, timerinfo.Setting{}
	}
	s := &StartupState{Mechanism: sv.Describe()}
	state, err := sv.State()
	if err != nil {
		s.Error = err.Error()
		return s, timerinfo.Setting{}
	}
	s.State, s.PID, s.Running = state.State, state.PID, state.Running()
	if state.State == "stopped" && (state.ExitCode != 0 || state.ServiceSpecific) {
		s.Exit = timerstate.ServiceExit(state)
	}
	definition, err := sv.Read()
	if err != nil {
		s.Error = err.Error()
		return s, timerinfo.Setting{}
	}
	if definition == nil {
		return s, timerinfo.Setting{}
	}
	if service, err := persist.ParseService(string(definition)); err == nil {
		s.Account = service.Account
	}
	return s, fillDefinition(sys, s, definition, func(self string) string { return self }, true)
}

// SamePath compares executable paths as the OS does: case-insensitively
// on Windows, after resolving links elsewhere.
func SamePath(a, b string, windows bool) bool {
	if windows {
		return strings.EqualFold(filepath.Clean(a), filepath.Clean(b))
	}
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	if errA != nil || errB != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return ra == rb
}
