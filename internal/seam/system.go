package seam

import (
	"context"
	"os"
	"os/exec"
	"time"

	"github.com/tickscope/tickscope/internal/who"
)

// System is what the hold commands (apply, run, status, verify-global,
// global, startup remove) read and change outside a measurement: every
// role below. Each OS implements it in package platform, and package sim
// fakes it; what an OS lacks returns ErrUnsupported. A use case takes
// only the roles it uses, composed in an interface of its own, so that
// its signature says which OS effects it can cause.
type System interface {
	User
	Self
	Executables
	Locker
	HolderProbe
	Autostart
	ServiceRunner
	GlobalKey
	Processes
	Children
	Desktop
	Throttling
	Power
	StateFiles
	HolderTracer
	Programs
}

// User is the user tickscope runs as.
type User interface {
	// Elevated reports whether tickscope runs elevated (Windows) or as root.
	Elevated() bool
	// UserSID is the SID, in string form, of the user tickscope runs as
	// (Windows: the token user): the user the logon task names in its
	// trigger and principal. Elsewhere it returns ErrUnsupported.
	UserSID() (string, error)
}

// Self is the running tickscope.
type Self interface {
	// Executable is the path of the running tickscope.
	Executable() (string, error)
}

// Executables is what tells whether an executable can be started later,
// at logon or boot: not a build go run deletes, of the subsystem it
// must be, at the path the Task Scheduler expands.
type Executables interface {
	// GoRunTempDir is the temporary directory, which go run builds under:
	// it is only compared with the executable's path (a startup holder
	// must not run a build go run deletes), never written or read, as
	// another user can plant anything there.
	GoRunTempDir() string
	// ExeSubsystem reads the Subsystem field of the PE optional header of
	// the executable at path (Windows: 2 for the GUI subsystem, 3 for the
	// console); an error wrapping fs.ErrNotExist when there is no such
	// file, ErrUnsupported on other OSes.
	ExeSubsystem(path string) (uint16, error)
	// LookupEnv reads an environment variable.
	LookupEnv(name string) (string, bool)
}

// Locker takes the machine-wide locks that keep two tickscopes' requests
// apart.
type Locker interface {
	// Lock takes the exclusive lock called name (BenchLock, HolderLock,
	// WhoLock), kept where no other user can write (package platform:
	// lock.go), and writes its record: the process id of its holder. The
	// OS drops it when its holder exits, however it exits. Another holder
	// gives a *LockedError naming its process id.
	Lock(name string) (release func(), err error)
}

// HolderProbe tells whether the startup holder runs, without taking its
// lock.
type HolderProbe interface {
	// Holder reports whether the startup holder (a process holding
	// HolderLock) runs, and its process id, 0 when it runs but its id
	// cannot be read. It probes without taking the lock, even for an
	// instant: a holder starting meanwhile is never refused because of it.
	Holder() (pid int, running bool)
}

// Autostart is the OS's ways of starting the holder at logon or boot.
type Autostart interface {
	// Startup is the OS's way of starting the holder at logon or boot, or
	// nil where tickscope has none.
	Startup() Startup
	// BootService is the Windows service that holds from boot (apply
	// --persist --boot), or nil where tickscope has none (every OS but
	// Windows).
	BootService() Service
}

// ServiceRunner runs tickscope as a Windows service.
type ServiceRunner interface {
	// RunService runs serve as the Windows service called name, under the
	// service manager, and returns when serve has: serve's context ends
	// when the manager asks the service to stop (Stop, or Shutdown as the
	// machine shuts down). A serve that returns an error stops the
	// service with a service-specific exit code of 1. It fails at once in
	// a process the service manager did not start, and elsewhere returns
	// ErrUnsupported.
	RunService(name string, serve func(ctx context.Context, run ServiceRun) error) error
}

// GlobalKey reads and writes Windows' GlobalTimerResolutionRequests.
type GlobalKey interface {
	// GlobalRequests reads Windows' GlobalTimerResolutionRequests (nil when
	// absent, and everywhere else).
	GlobalRequests() *uint32
	// SetGlobalRequests writes GlobalTimerResolutionRequests=1 (on) or
	// deletes the value (off), and nothing else.
	SetGlobalRequests(on bool) error
}

// Processes reads and changes another process's timer slack (apply --pid).
type Processes interface {
	// DescribeProcess says what a process is, for apply --pid: a kernel
	// thread's slack is the kernel's, not a program's. A process id that
	// names no process gives an error wrapping ErrNoProcess that names the
	// call that failed.
	DescribeProcess(pid int) (Process, error)
	// ProcessSlack reads a process's timer slack (Linux).
	ProcessSlack(pid int) (int64, error)
	// SetProcessSlack sets a process's timer slack; 0 restores its default
	// (Linux).
	SetProcessSlack(pid int, ns int64) error
}

// Children starts a program tickscope runs (run) and passes it signals.
type Children interface {
	// StartTied starts cmd so that it cannot outlive tickscope, however
	// tickscope ends, even by SIGKILL or TerminateProcess (run's program
	// kept the setting it was given otherwise). untie is called once the
	// program has exited: what it left running lives on. A program that
	// started but could not be tied gives a *NotTiedError: it runs, and
	// the caller says so.
	StartTied(cmd *exec.Cmd) (untie func(), err error)
	// ForwardSignals reports whether run must pass the signals it receives
	// (Ctrl+C, SIGTERM, SIGHUP, SIGQUIT) on to its program: on Unix a
	// signal sent to tickscope reaches only tickscope, while Windows'
	// console delivers Ctrl+C to every process attached to it.
	ForwardSignals() bool
}

// Desktop is how tickscope sits on the console and the desktop.
type Desktop interface {
	// Console says how this process sits on a console: alone on one made
	// for it (a double-click in Explorer), on none with nowhere to write
	// (the windowless holder), or anything else, which is every OS but
	// Windows.
	Console() Console
	// DetachConsole detaches from the console (Windows).
	DetachConsole() error
	// WatchDesktopEscape calls stop when ESC is pressed anywhere on the
	// desktop (Windows); restore stops watching.
	WatchDesktopEscape(stop func()) (restore func(), err error)
}

// Throttling is Windows 11's throttling of hidden processes' timer
// requests.
type Throttling interface {
	// IgnoreTimerThrottling opts this process out of Windows 11's
	// throttling of hidden processes' timer requests; where the OS has no
	// such throttling it returns an error the caller may report and ignore.
	IgnoreTimerThrottling() error
}

// Power tells when the machine slept, which a holder re-checks after.
type Power interface {
	// WatchResume calls resumed (on a goroutine of its own) after each
	// resume of the machine from sleep, until stop: Windows registers a
	// suspend/resume notification. Where the OS sends none it returns
	// ErrUnsupported, and a holder compares SleptFor between its checks.
	WatchResume(resumed func()) (stop func(), err error)
	// SleptFor is how long the machine has been suspended since it booted
	// (Linux: CLOCK_BOOTTIME less CLOCK_MONOTONIC, which stops during a
	// suspend); ok is false where it cannot be told.
	SleptFor() (slept time.Duration, ok bool)
}

// StateFiles are the user's own files of tickscope's state: the locks'
// records, the windowless holder's log, ui's launchers.
type StateFiles interface {
	// StateDir is the user's own directory of tickscope's state: the
	// instance locks' records and the windowless holder's log (package
	// platform: lock.go). It may not exist yet; OpenStateFile makes it and
	// checks it before use.
	StateDir() (string, error)
	// OpenStateFile opens the file name in StateDir as how says, never
	// through a symbolic link or other reparse point, and only a plain
	// file with one name, the user's own: a file that is not is refused
	// before it is emptied or written. Reading a file or directory that
	// does not exist gives an error wrapping fs.ErrNotExist.
	OpenStateFile(name string, how StateOpen) (*os.File, error)
}

// HolderTracer reads who holds the timer.
type HolderTracer interface {
	// Holders reads who holds the timer now: on Windows the rundown of
	// the Microsoft-Windows-Kernel-Power provider in an ETW session of its
	// own (elevated only), which it always stops; on Linux a scan of /proc
	// and /sys. `who` calls it once, and `watch` may call it in its loop.
	Holders(ctx context.Context) (*who.Snapshot, error)
	// HolderEvents delivers the Kernel-Power timer events as they come
	// (Windows, elevated), the rundown's first, until ctx ends, then stops
	// its session; each value received on rundown asks for a fresh
	// rundown. Elsewhere it returns ErrUnsupported: nothing announces a
	// change, and callers poll Holders.
	HolderEvents(ctx context.Context, rundown <-chan struct{}, each func(who.Event)) error
}

// Programs finds the processes of watched programs (apply --while) and
// the kernel's announcements of them.
type Programs interface {
	// ScanPrograms returns a scanner of the processes that run one of
	// programs (apply --while), each a name or an absolute path as
	// options.Programs checked it for this OS: Linux reads /proc, Windows
	// takes a process snapshot. Elsewhere it returns ErrUnsupported.
	ScanPrograms(programs []string) (ProgramScanner, error)
	// ProgramEvents subscribes to the kernel's announcements of processes
	// executing a program, renaming their main thread and exiting, as
	// they happen (Linux: the process-events connector, offered in the
	// initial user and pid namespaces, to root or CAP_NET_ADMIN only
	// before Linux 6.6). Where there is none it returns an error:
	// ErrUnsupported where the OS has no such source in tickscope, else
	// why it could not be had (not root on an older kernel, a container).
	// What it announces is a reason to scan, never what runs: a
	// ProgramScanner decides that. programs are the programs watched, as
	// ScanPrograms takes them: the source may leave out the execs and
	// renames of processes that cannot be running one of them (whose
	// name is none of theirs), but never a watched process's (Track);
	// nil keeps every process's.
	ProgramEvents(programs []string) (ProgramEvents, error)
	// ListensToProgramEvents reports whether the process pid (a startup
	// holder) listens to the kernel's process events (Linux: it holds a
	// socket of the process connector that joined its group), so that
	// status says which a holder with --while uses. Where tickscope has
	// no such source it returns ErrUnsupported; another user's process's
	// descriptors cannot be read.
	ListensToProgramEvents(pid int) (bool, error)
}

// ProgramEvents is a source of announcements that processes may have
// started or stopped running a program (Programs.ProgramEvents). What is
// announced between Takes is taken at once.
type ProgramEvents interface {
	// Ready receives a value when something was announced since the last
	// Take, once the source was asked to tell (Take's wake; from the
	// start).
	Ready() <-chan struct{}
	// Take returns what was announced since the last Take, and forgets
	// it. With wake, the source then tells on Ready when something more
	// comes; without, it waits for the next Take, which takes what came
	// meanwhile, and costs nothing until then.
	Take(wake bool) ProcessChanges
	// Track says whose exits are wanted: those of the threads of pids
	// (the watched processes running), and no other process's (until the
	// first Track, every exit). The source may announce more.
	Track(pids []int)
	// Close stops the source.
	Close()
}

// ProcessChanges is what a ProgramEvents source gathered: process ids
// (thread group ids) of any user's processes, as the kernel announced
// them. They say when to look, never what runs.
type ProcessChanges struct {
	// Ran are the processes that executed a program or renamed their
	// main thread: they may run a watched program now.
	Ran []int
	// Exited are the processes a thread of which exited: the process
	// may have exited (its last thread), or may not.
	Exited []int
	// Lost is set when announcements were lost (the kernel's buffer
	// overran, or more came than are gathered): anything may have
	// changed.
	Lost bool
	// Err is set once the source has failed: nothing more comes.
	Err error
}

// ProgramScanner finds the running processes of a list of programs. It
// keeps what it read between scans, so that a scan reads little more
// than what changed; it is used from one goroutine.
type ProgramScanner interface {
	// Scan lists the processes running now that run one of the programs,
	// in no particular order.
	Scan() ([]ProgramProcess, error)
	// Unreadable lists the processes the last Scan met for the first time
	// and could not tell: their short name is a program's that is named
	// by its path (or, on Linux, by a name longer than comm holds), but
	// their executable's path could not be read (another user's process,
	// a protected one). Scan counts them as not running it, and does not
	// try again while they run.
	Unreadable() []UnreadableProcess
	// Hint tells the next Scan what an event source announced since the
	// Scan before: it chooses what that Scan reads, never what it finds.
	// A scanner that reads everything at every Scan ignores it.
	Hint(h ScanHint)
	// Close releases what the scanner keeps.
	Close()
}

// ScanHint is what an event source announced since the last Scan
// (ProgramScanner.Hint).
type ScanHint struct {
	// PIDs are processes that executed a program or renamed themselves:
	// they are read afresh, as processes not seen before, whatever the
	// scanner kept of them (a process that executes the program keeps its
	// id).
	PIDs []int
	// Only says nothing else changed: the Scan reads PIDs and the
	// processes it matched, and looks for no other.
	Only bool
	// All says announcements were lost: every process is read afresh.
	All bool
}

// ProgramProcess is a running process of a watched program.
type ProgramProcess struct {
	PID int
	// Program is the index of its program in the scanner's list.
	Program int
	// Started is when the process started, the zero Time where the OS
	// does not say.
	Started time.Time
	// UID is the process's real user id (Linux: whoever started it, or
	// root), -1 where the scanner does not say (Windows).
	UID int
	// SID is, on Windows, the security identifier of the user its token
	// is for (TokenUser), as text (S-1-5-21-...): who started it. It is
	// "" where the scanner does not say (Linux) or could not read it
	// (another user's process, which a token's access control withholds
	// from those who are not elevated).
	SID string
}

// UnreadableProcess is a process a ProgramScanner could not tell
// (Unreadable): the program its short name may be, and why its path could
// not be read.
type UnreadableProcess struct {
	PID     int
	Program int
	Err     error
}

// StateOpen is how OpenStateFile opens a file.
type StateOpen int

const (
	// StateRead opens it to read; it is neither made nor changed.
	StateRead StateOpen = iota
	// StateReplace makes it, or empties it once it is known to be a plain
	// file of the user's, to write.
	StateReplace
	// StateAppend makes it, or keeps what it holds, to write at its end.
	StateAppend
)

// Console is how a process sits on a console.
type Console int

const (
	// ConsoleShared: what the process writes goes where its parent put it
	// (a terminal other processes share, a pipe, a file, a journal). Every
	// OS but Windows always answers this.
	ConsoleShared Console = iota
	// ConsoleAlone: the process is the only one on its console, which was
	// therefore made for it, as when Explorer starts a console program
	// that was double-clicked; its window closes when the process exits.
	ConsoleAlone
	// ConsoleNone: no console and no standard error: what the process
	// writes goes nowhere, as for the GUI-subsystem holder Task Scheduler
	// starts at logon.
	ConsoleNone
)

// The PE optional header's Subsystem values ("PE Format", Windows
// Subsystem, Microsoft Learn).
const (
	IMAGE_SUBSYSTEM_WINDOWS_GUI = 2
	IMAGE_SUBSYSTEM_WINDOWS_CUI = 3
)

// Startup is the OS's way of starting the holder when the user logs on
// (Windows: a Task Scheduler task) or at boot (Linux: a systemd unit).
// Definitions are generated and parsed by package persist; this only
// reads, installs and removes them.
type Startup interface {
	// Describe names it for people: "Task Scheduler task tickscope".
	Describe() string
	// Read returns the installed definition, or nil when none is installed.
	Read() ([]byte, error)
	// Install registers a definition, replacing one that exists.
	Install(definition []byte) error
	// Start runs the holder now.
	Start() error
	// Stop ends a running holder, if one runs: by the mechanism's own
	// means, then the process the holder's lock's record names, only when
	// it runs this tickscope (or its windowless holder) as the caller or
	// as the record's writer; otherwise it refuses, saying why.
	Stop() error
	// Delete unregisters the definition.
	Delete() error
	// DeleteByHand is the command a user types to delete what is installed
	// under tickscope's name, for a definition tickscope did not write.
	DeleteByHand() string
}

// Service is the Windows service apply --persist --boot installs: a
// Startup whose definitions are persist.ServiceText's, Start and Stop the
// service manager's, Describe "Windows service tickscope".
type Service interface {
	Startup
	// State is what the service manager says of the service now: the zero
	// ServiceState when none is installed.
	State() (ServiceState, error)
	// ProtectedDirs are the directories whose files, by default, only
	// administrators can write (Program Files): a service runs its
	// executable under its own account at every boot, so an executable
	// anyone else could replace would be theirs to run.
	ProtectedDirs() ([]string, error)
}

// ServiceState is a service's state as the service manager reports it.
type ServiceState struct {
	// State is "stopped", "start pending", "stop pending", "running",
	// "continue pending", "pause pending" or "paused"; "" when no service
	// is installed.
	State string
	// PID is its process id while it has one, else 0.
	PID int
	// ExitCode is the code it last stopped with (Win32ExitCode, or the
	// service-specific one when ServiceSpecific), 0 for none.
	ExitCode        uint32
	ServiceSpecific bool
}

// Running reports whether the service has a process (any state but
// stopped).
func (s ServiceState) Running() bool { return s.State != "" && s.State != "stopped" }

// ServiceRun is how a service's body talks to the service manager.
type ServiceRun struct {
	// Running tells the service manager the service runs: until then it
	// shows the service starting, and sends it no Stop.
	Running func()
	// Log writes a line to the Application event log under the service's
	// name (level "info", "warning" or "error"); where the log cannot be
	// opened the line is lost.
	Log func(level, msg string)
}

// Process is what DescribeProcess tells of a process.
type Process struct {
	PID int
	// Name is the kernel's name of it (Linux: the comm field).
	Name string
	// KernelThread is set for a kernel thread (Linux: PF_KTHREAD).
	KernelThread bool
}

// NotTiedError says that StartTied started the program but could not tie
// it to tickscope: it would outlive a killed tickscope.
type NotTiedError struct{ Err error }

func (e *NotTiedError) Error() string {
	return "the program is not tied to tickscope and would outlive it if tickscope were killed: " + e.Err.Error()
}
func (e *NotTiedError) Unwrap() error { return e.Err }
