package sim

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/who"
)

// System is an in-memory seam.System. Its fields are what the fake OS
// reports; set them before use. The zero System is a machine that is not
// elevated, has no startup mechanism, no global value, no processes and no
// running holder.
type System struct {
	mu sync.Mutex

	IsElevated bool
	// Global is GlobalTimerResolutionRequests (nil: absent).
	Global *uint32
	// GlobalWrites counts SetGlobalRequests calls that changed something.
	GlobalWrites int
	// SetGlobalErr fails SetGlobalRequests.
	SetGlobalErr error
	// Slack is each process's timer slack; a pid absent here names no
	// process.
	Slack map[int]int64
	// SetSlackErr fails SetProcessSlack.
	SetSlackErr error
	// HolderPID and HolderRunning are the startup holder's state (PID 0
	// while running: its id cannot be read).
	HolderPID     int
	HolderRunning bool
	// StartupMechanism is the startup mechanism, nil for none.
	StartupMechanism *Startup
	// Locks are the locks held, by name, with their holder's pid.
	Locks map[string]int
	// Exe and ExeErr are what Executable returns.
	Exe    string
	ExeErr error
	// Env is the environment.
	Env map[string]string
	// Temp is GoRunTempDir.
	Temp string
	// State is StateDir, a directory of the test's: OpenStateFile opens
	// files there. Empty, the machine has no state directory, and nothing
	// is opened (ui --simulate's page must not read the machine's).
	State string
	// Forward is ForwardSignals.
	Forward bool
	// KernelThreads are the pids of Slack that are kernel threads
	// (DescribeProcess).
	KernelThreads map[int]bool
	// Tied counts the programs StartTied started, and Untied the unties
	// called.
	Tied, Untied int
	// SID is UserSID's answer ("" gives FakeSID).
	SID string
	// ThrottlingErr fails IgnoreTimerThrottling (Windows 10 and earlier).
	ThrottlingErr error
	// EscapeErr fails WatchDesktopEscape.
	EscapeErr error
	// Detached and EscapeWatched record DetachConsole and
	// WatchDesktopEscape.
	Detached, EscapeWatched bool
	// Escape, when set, is called with WatchDesktopEscape's stop: a test
	// presses ESC by calling it.
	Escape func(stop func())
	// ConsoleState is Console's answer (the zero value: a shared
	// terminal).
	ConsoleState seam.Console
	// Executables are the PE executables on the fake disk, by path, with
	// their Subsystem; ExeSubsystem of any other path is not found. While
	// it is nil every path is a GUI-subsystem executable, for the tests
	// that do not look at the windowless holder.
	Executables map[string]uint16
	// Snapshots are what Holders returns, one per call (the last one
	// again once they run out); HoldersErr fails it.
	Snapshots  []*who.Snapshot
	HoldersErr error
	// Events are what HolderEvents delivers before it returns EventsErr;
	// with EventsErr nil it then waits for its context to end (asks for a
	// fresh rundown deliver nothing more). NoEvents makes it return
	// ErrUnsupported, as on Linux.
	Events    []who.Event
	EventsErr error
	NoEvents  bool
	// Resumes is whether the fake OS sends resume notifications
	// (WatchResume; Windows), and resumed the callback registered: a test
	// resumes the machine with Resume.
	Resumes bool
	resumed func()
	// Slept is SleptFor's answer (Linux), valid with SleptKnown.
	Slept      time.Duration
	SleptKnown bool
	// Running lists the processes running now, for ScanPrograms (nil:
	// none); ScanErr fails every scan. Scans counts the scans made.
	Running func() []RunningProcess
	ScanErr error
	Scans   int
	// LinuxPrograms makes ScanPrograms follow Linux's rules (comm, exact
	// names, links) rather than Windows'; Links are the links a path may
	// be, by path, leading to their targets.
	LinuxPrograms bool
	Links         map[string]string
	// OpenScanners counts the scanners ScanPrograms made and Close has not
	// closed.
	OpenScanners int
	// ProcessEvents, when set, is what ProgramEvents returns: a test
	// announces processes with its Announce. Without it ProgramEvents
	// fails with ProcessEventsErr, or ErrUnsupported when that is nil
	// too. Hints records the scanners' hints.
	ProcessEvents    *ProgramEvents
	ProcessEventsErr error
	Hints            []seam.ScanHint
	// Listening are the processes that listen to process events
	// (ListensToProgramEvents); nil: the OS has none.
	Listening map[int]bool
	// BootServiceMechanism is the boot service (Windows), nil for none;
	// NewBootService makes one.
	BootServiceMechanism *Service
	// RunServiceErr fails RunService at once, as in a process the service
	// manager did not start. Otherwise RunService runs serve, records the
	// name in ServedAs, whether serve said it runs in ServedRunning and
	// what it logged in ServiceLog ("level: msg"), and calls
	// OnServiceRunning, when set, with the stop that ends serve's context:
	// a test is the service manager there.
	RunServiceErr    error
	ServedAs         string
	ServedRunning    bool
	ServiceLog       []string
	OnServiceRunning func(stop func())
}

var _ seam.System = (*System)(nil)

func (s *System) Elevated() bool { return s.IsElevated }

// Lock takes name for this process (pid 1), or names its holder.
func (s *System) Lock(name string) (func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if pid, held := s.Locks[name]; held {
		return nil, &seam.LockedError{What: name, PID: pid}
	}
	if s.Locks == nil {
		s.Locks = map[string]int{}
	}
	s.Locks[name] = 1
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.Locks, name)
	}, nil
}

func (s *System) Holder() (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.HolderPID, s.HolderRunning
}

func (s *System) Startup() seam.Startup {
	if s.StartupMechanism == nil {
		return nil
	}
	return s.StartupMechanism
}

func (s *System) GlobalRequests() *uint32 {
	if s.Global == nil {
		return nil
	}
	v := *s.Global
	return &v
}

func (s *System) SetGlobalRequests(on bool) error {
	if s.SetGlobalErr != nil {
		return s.SetGlobalErr
	}
	s.GlobalWrites++
	if on {
		one := uint32(1)
		s.Global = &one
	} else {
		s.Global = nil
	}
	return nil
}

func (s *System) ProcessSlack(pid int) (int64, error) {
	ns, ok := s.Slack[pid]
	if !ok {
		return 0, fmt.Errorf("process %d: %w", pid, seam.ErrNoProcess)
	}
	return ns, nil
}

// SetProcessSlack sets the slack; 0 restores DefaultSlack.
func (s *System) SetProcessSlack(pid int, ns int64) error {
	if _, ok := s.Slack[pid]; !ok {
		return fmt.Errorf("process %d: %w", pid, seam.ErrNoProcess)
	}
	if s.SetSlackErr != nil {
		return s.SetSlackErr
	}
	if ns == 0 {
		ns = DefaultSlack
	}
	s.Slack[pid] = ns
	return nil
}

// DefaultSlack is Linux's default timer slack, 50 µs.
const DefaultSlack = 50_000

// DescribeProcess describes a process of Slack, named "fake".
func (s *System) DescribeProcess(pid int) (seam.Process, error) {
	if _, ok := s.Slack[pid]; !ok {
		return seam.Process{}, &seam.OSError{Call: fmt.Sprintf("describe process %d (fake)", pid), Err: seam.ErrNoProcess}
	}
	return seam.Process{PID: pid, Name: "fake", KernelThread: s.KernelThreads[pid]}, nil
}

// StartTied starts cmd for real: the fake ties nothing to the test.
func (s *System) StartTied(cmd *exec.Cmd) (func(), error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.Tied++
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.Untied++
		s.mu.Unlock()
	}, nil
}

func (s *System) IgnoreTimerThrottling() error { return s.ThrottlingErr }

// FakeSID is the user a fake System runs as unless its SID says otherwise.
const FakeSID = "S-1-5-21-1004336348-1177238915-682003330-1001"

func (s *System) UserSID() (string, error) {
	if s.SID == "" {
		return FakeSID, nil
	}
	return s.SID, nil
}

func (s *System) DetachConsole() error { s.Detached = true; return nil }

func (s *System) WatchDesktopEscape(stop func()) (func(), error) {
	if s.EscapeErr != nil {
		return nil, s.EscapeErr
	}
	s.EscapeWatched = true
	if s.Escape != nil {
		s.Escape(stop)
	}
	return func() {}, nil
}

func (s *System) ForwardSignals() bool { return s.Forward }

func (s *System) WatchResume(resumed func()) (func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.Resumes {
		return nil, seam.ErrUnsupported
	}
	s.resumed = resumed
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.resumed = nil
	}, nil
}

// Resume is the machine resuming from sleep: the WatchResume callback
// runs, if one is registered.
func (s *System) Resume() {
	s.mu.Lock()
	resumed := s.resumed
	s.mu.Unlock()
	if resumed != nil {
		resumed()
	}
}

// Sleep adds d to the time suspended that SleptFor reports.
func (s *System) Sleep(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Slept += d
}

func (s *System) SleptFor() (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Slept, s.SleptKnown
}

func (s *System) Executable() (string, error) { return s.Exe, s.ExeErr }

func (s *System) LookupEnv(name string) (string, bool) {
	v, ok := s.Env[name]
	return v, ok
}

func (s *System) GoRunTempDir() string { return s.Temp }

func (s *System) StateDir() (string, error) {
	if s.State == "" {
		return "", errNoState
	}
	return s.State, nil
}

// errNoState is a System without a State directory.
var errNoState = errors.New("the fake machine has no state directory")

// OpenStateFile opens name in State as how says; the fake checks nothing
// of what it opens (package platform's tests do).
func (s *System) OpenStateFile(name string, how seam.StateOpen) (*os.File, error) {
	if s.State == "" {
		return nil, errNoState
	}
	flags := map[seam.StateOpen]int{
		seam.StateRead:    os.O_RDONLY,
		seam.StateReplace: os.O_WRONLY | os.O_CREATE | os.O_TRUNC,
		seam.StateAppend:  os.O_WRONLY | os.O_CREATE | os.O_APPEND,
	}[how]
	return os.OpenFile(filepath.Join(s.State, name), flags, 0o600)
}

func (s *System) Console() seam.Console { return s.ConsoleState }

func (s *System) ExeSubsystem(path string) (uint16, error) {
	if s.Executables == nil {
		return seam.IMAGE_SUBSYSTEM_WINDOWS_GUI, nil
	}
	subsystem, ok := s.Executables[path]
	if !ok {
		return 0, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	return subsystem, nil
}

// Startup is an in-memory startup mechanism of a System.
type Startup struct {
	sys *System
	// Name is what Describe returns.
	Name string
	// Definition is the installed definition, nil for none.
	Definition []byte
	// ReadErr, InstallErr, StartErr, StopErr, DeleteErr fail those calls.
	ReadErr, InstallErr, StartErr, StopErr, DeleteErr error
	// OnStart runs when Start succeeds: a test starts its holder there.
	OnStart func()
	// Installs, Starts, Stops and Deletes count the calls that succeeded.
	Installs, Starts, Stops, Deletes int
}

var _ seam.Startup = (*Startup)(nil)

// NewStartup gives s a startup mechanism described as name.
func (s *System) NewStartup(name string) *Startup {
	s.StartupMechanism = &Startup{sys: s, Name: name}
	return s.StartupMechanism
}

func (st *Startup) Describe() string { return st.Name }

func (st *Startup) Read() ([]byte, error) { return st.Definition, st.ReadErr }

func (st *Startup) Install(definition []byte) error {
	if st.InstallErr != nil {
		return st.InstallErr
	}
	st.Installs++
	st.Definition = append([]byte(nil), definition...)
	return nil
}

func (st *Startup) Start() error {
	if st.StartErr != nil {
		return st.StartErr
	}
	st.Starts++
	if st.OnStart != nil {
		st.OnStart()
	}
	return nil
}

// Stop ends the holder, whether or not its process id is known: the real
// mechanisms end it by their own means (systemctl stop, Task Scheduler's stop)
// before they need the id.
func (st *Startup) Stop() error {
	if st.StopErr != nil {
		return st.StopErr
	}
	st.Stops++
	st.sys.mu.Lock()
	st.sys.HolderRunning, st.sys.HolderPID = false, 0
	st.sys.mu.Unlock()
	return nil
}

func (st *Startup) Delete() error {
	if st.DeleteErr != nil {
		return st.DeleteErr
	}
	st.Deletes++
	st.Definition = nil
	return nil
}

func (st *Startup) DeleteByHand() string { return "delete " + st.Name + " by hand" }

func (s *System) BootService() seam.Service {
	if s.BootServiceMechanism == nil {
		return nil
	}
	return s.BootServiceMechanism
}

func (s *System) RunService(name string, serve func(ctx context.Context, run seam.ServiceRun) error) error {
	if s.RunServiceErr != nil {
		return s.RunServiceErr
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	s.mu.Lock()
	s.ServedAs = name
	s.mu.Unlock()
	return serve(ctx, seam.ServiceRun{
		Running: func() {
			s.mu.Lock()
			s.ServedRunning = true
			s.mu.Unlock()
			if s.OnServiceRunning != nil {
				s.OnServiceRunning(stop)
			}
		},
		Log: func(level, msg string) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.ServiceLog = append(s.ServiceLog, level+": "+msg)
		},
	})
}

// Service is an in-memory boot service: a Startup whose state is its own
// (State), not the logon holder's lock.
type Service struct {
	Startup
	// Now is what State reports; StateErr fails it.
	Now      seam.ServiceState
	StateErr error
	// Dirs are ProtectedDirs; DirsErr fails it.
	Dirs    []string
	DirsErr error
	// StopLeavesRunning makes Stop succeed without stopping the service.
	StopLeavesRunning bool
}

var _ seam.Service = (*Service)(nil)

// NewBootService gives s a boot service described as name, with
// C:\Program Files as its protected directory.
func (s *System) NewBootService(name string) *Service {
	s.BootServiceMechanism = &Service{Startup: Startup{sys: s, Name: name}, Dirs: []string{`C:\Program Files`}}
	return s.BootServiceMechanism
}

func (sv *Service) State() (seam.ServiceState, error) { return sv.Now, sv.StateErr }

func (sv *Service) ProtectedDirs() ([]string, error) { return sv.Dirs, sv.DirsErr }

// Install registers the definition; a new service is stopped.
func (sv *Service) Install(definition []byte) error {
	if err := sv.Startup.Install(definition); err != nil {
		return err
	}
	if sv.Now.State == "" {
		sv.Now = seam.ServiceState{State: "stopped"}
	}
	return nil
}

// Start runs it as process 4242, then calls OnStart.
func (sv *Service) Start() error {
	if sv.StartErr != nil {
		return sv.StartErr
	}
	sv.Starts++
	sv.Now = seam.ServiceState{State: "running", PID: 4242}
	if sv.OnStart != nil {
		sv.OnStart()
	}
	return nil
}

func (sv *Service) Stop() error {
	if sv.StopErr != nil {
		return sv.StopErr
	}
	sv.Stops++
	if !sv.StopLeavesRunning && sv.Now.State != "" {
		sv.Now = seam.ServiceState{State: "stopped"}
	}
	return nil
}

func (sv *Service) Delete() error {
	if err := sv.Startup.Delete(); err != nil {
		return err
	}
	sv.Now = seam.ServiceState{}
	return nil
}

func (s *System) Holders(context.Context) (*who.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.HoldersErr != nil {
		return nil, s.HoldersErr
	}
	if len(s.Snapshots) == 0 {
		return nil, seam.ErrUnsupported
	}
	snap := s.Snapshots[0]
	if len(s.Snapshots) > 1 {
		s.Snapshots = s.Snapshots[1:]
	}
	return snap, nil
}

func (s *System) HolderEvents(ctx context.Context, _ <-chan struct{}, each func(who.Event)) error {
	if s.NoEvents {
		return seam.ErrUnsupported
	}
	for _, ev := range s.Events {
		each(ev)
	}
	if s.EventsErr != nil {
		return s.EventsErr
	}
	<-ctx.Done()
	return nil
}

// Shell is an in-memory seam.Shell: it records the pages it was asked to
// open and the elevated runs asked for, and runs nothing.
type Shell struct {
	mu sync.Mutex
	// Opened are the URLs OpenURL was given; OpenErr fails it.
	Opened  []string
	OpenErr error
	// Elevated are the argument lists RunElevated was given, the
	// executable first; it answers ExitCode, or fails with ElevateErr.
	Elevated   [][]string
	ExitCode   int
	ElevateErr error
}

var _ seam.Shell = (*Shell)(nil)

func (s *Shell) OpenURL(url string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Opened = append(s.Opened, url)
	return s.OpenErr
}

func (s *Shell) RunElevated(exe string, args []string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Elevated = append(s.Elevated, append([]string{exe}, args...))
	return s.ExitCode, s.ElevateErr
}

// Calls returns what was opened and run elevated so far.
func (s *Shell) Calls() (opened []string, elevated [][]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.Opened...), append([][]string(nil), s.Elevated...)
}

// NewWindowsSystem is the System a command runs on with --simulate: an
// in-memory Windows machine that is not elevated and has Task Scheduler,
// so that nothing done on the model reaches this machine. Its processes
// are the paced model's scenario's (none when model is nil).
func NewWindowsSystem(model *Paced) *System {
	sys := &System{Exe: `C:\Tools\tickscope.exe`, Temp: `C:\Users\you\AppData\Local\Temp`}
	sys.NewStartup("Task Scheduler task tickscope (simulated)")
	if model != nil {
		sys.Running = func() []RunningProcess {
			var out []RunningProcess
			for _, p := range model.RunningPrograms() {
				out = append(out, RunningProcess{PID: p.PID, Name: p.Name, Path: p.Path, Started: p.Started})
			}
			return out
		}
	}
	return sys
}
