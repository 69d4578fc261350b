// Package startup decides and does what installs and removes the startup
// holder: apply --persist (the logon task or systemd unit, or with --boot
// the Windows service), startup remove, and the holder's log; it renders
// their results. Package persist generates and reads back the definitions.
package startup

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/timerstate"
	"github.com/tickscope/tickscope/internal/version"
)

// StartupDelaySeconds is how long after logon the logon holder starts.
const StartupDelaySeconds = 15

// PersistOptions are apply --persist's.
type PersistOptions struct {
	// Version is tickscope's, for the definition's marker.
	Version string
	// DryRun returns the definition and changes nothing.
	DryRun bool
	// Sleep waits between looks at the started holder (time.Sleep when
	// nil).
	Sleep func(time.Duration)
	// While are the programs the holder holds the setting for (--while),
	// nil to hold it throughout.
	While []string
	// Boot installs the Windows service that holds from boot instead of
	// the logon task.
	Boot bool
}

// PersistResult is what apply --persist did.
type PersistResult struct {
	// Definition is the task or unit as text (--dry-run).
	Definition string
	// Startup names the mechanism; Exe and Args are what it runs, When when.
	Startup string
	Exe     string
	Args    []string
	When    string
	// StartErr is why the holder could not be started now.
	StartErr error
	// Running is whether the holder ran with the setting in force within
	// 2 s of its start (with While: whether it ran), and PID its process
	// id (0 when unreadable).
	Running bool
	PID     int
	// While are the programs the holder holds the setting for.
	While []string
	// ElevatedUser is set on Windows when --persist ran elevated: the task
	// names the token's user, which after over-the-shoulder elevation (an
	// administrator's credentials typed in) is that administrator, not the
	// person at the keyboard, so the holder would start at their logon.
	ElevatedUser bool
	// Account is the account the holder runs as, when it is not the user's
	// (the boot service's).
	Account string
	// Notes are what the user should know of what was installed (the
	// boot service's).
	Notes []string
	// Stopped says how the boot service ended when it stopped instead of
	// holding, "" otherwise.
	Stopped string
}

// The parts of the OS startup's actions use (seam.System, which package
// platform implements and package sim fakes, has them all).
type (
	// System is what installing and removing the startup holder reads
	// and changes: the startup mechanisms, the user they run the holder
	// as, whether the holder runs, and the executables they would start.
	System interface {
		seam.User
		seam.Self
		seam.Executables
		seam.HolderProbe
		seam.Autostart
	}
	// LogSystem is what the holder's log needs: how the holder sits on
	// a console, whether another holder runs, and the state file the log
	// is.
	LogSystem interface {
		seam.Desktop
		seam.HolderProbe
		seam.StateFiles
	}
)

// Persist registers the startup holder with args, starts it, and checks for
// up to 2 s that the setting appears. It refuses a holder that would hold
// nothing useful or could not be removed cleanly: while requests are
// per-process (Windows), without root (Linux), from go run's temporary
// build, from a path Task Scheduler would expand, and over a definition
// tickscope did not write.
func Persist(host seam.Host, sys System, q *timerinfo.Report, req timerinfo.Setting, args []string, o PersistOptions) (*PersistResult, error) {
	if o.Boot {
		return persistBoot(host, sys, q, req, args, o)
	}
	st := sys.Startup()
	if st == nil {
		return nil, fmt.Errorf("--persist: %w", seam.ErrUnsupported)
	}
	if q.Windows != nil {
		if err := refuseUseless(q.Windows, "a holder at logon", o.While); err != nil {
			return nil, err
		}
	} else if !sys.Elevated() {
		return nil, errors.New("--persist installs a systemd system unit and needs root")
	}
	exe, err := sys.Executable()
	if err != nil {
		return nil, &seam.OSError{Call: "find this executable", Err: err}
	}
	if TemporaryBuild(sys.GoRunTempDir(), exe) {
		return nil, fmt.Errorf("--persist refused: %s is a temporary build (go run) that will be deleted; build tickscope with go build or go install and run --persist from that binary", exe)
	}
	holder := persist.HolderPath(exe, q.Windows != nil)
	if q.Windows != nil {
		if err := checkHolder(sys, exe, holder); err != nil {
			return nil, err
		}
	}
	if err := refuseForeign(st); err != nil {
		return nil, err
	}
	if err := refuseOtherUsers(sys, st); err != nil {
		return nil, err
	}
	description := fmt.Sprintf("Holds %s (tickscope %s). Remove with: tickscope startup remove %s", req, args[0], persist.Marker(o.Version))
	var definition []byte
	if q.Windows != nil {
		if name := persist.ExpandedByTaskScheduler(holder, sys.LookupEnv); name != "" {
			return nil, fmt.Errorf("--persist refused: the path %s contains %%%s%%, which Task Scheduler would expand; move tickscope elsewhere", holder, name)
		}
		sid, err := taskUser(sys)
		if err != nil {
			return nil, err
		}
		if definition, err = persist.TaskXML(persist.Task{Exe: holder, Args: args, Description: description, DelaySeconds: StartupDelaySeconds, UserSID: sid}); err != nil {
			return nil, err
		}
	} else {
		definition = []byte(persist.SystemdUnit(persist.Unit{Exe: holder, Args: args, Description: description}))
	}
	res := &PersistResult{Startup: st.Describe(), Exe: holder, Args: args, When: startupWhen(q), ElevatedUser: q.Windows != nil && sys.Elevated(), While: o.While}
	if o.DryRun {
		if res.Definition, err = persist.DefinitionText(definition); err != nil {
			return nil, err
		}
		return res, nil
	}
	if err := st.Install(definition); err != nil {
		return nil, err
	}
	if res.StartErr = st.Start(); res.StartErr != nil {
		return res, nil
	}
	sleep := o.Sleep
	if sleep == nil {
		sleep = time.Sleep
	}
	if len(o.While) > 0 {
		// It holds nothing until a program runs: that it runs is all
		// there is to see.
		req = timerinfo.Setting{}
	}
	res.PID, res.Running = awaitHolder(host, req, sys.Holder, awaitLooks, sleep)
	return res, nil
}

// refuseUseless refuses a holder (what) that would hold a request
// reaching only itself (and not the programs of --while): while requests
// are per-process, and until a changed GlobalTimerResolutionRequests is in
// force (the kernel reads it at boot).
func refuseUseless(w *timerinfo.Windows, what string, while []string) error {
	if warning := w.PendingRebootWarning(); warning != "" {
		return fmt.Errorf("--persist refused until the key is in force: %s", warning)
	}
	if !w.RequestsGlobal() {
		whom := "itself"
		if len(while) > 0 {
			whom = "itself, not " + strings.Join(while, " or ")
		}
		return fmt.Errorf("--persist refused: requests are per-process here (%s), so %s would speed up only %s; %s", w.RequestModel, what, whom, w.GlobalAdvice())
	}
	return nil
}

// BuildHolderCommand is the command that builds the windowless holder at
// path from tickscope's source directory.
func BuildHolderCommand(path string) string {
	return "go build -ldflags -H=windowsgui -o " + persist.WindowsCommandLine([]string{path}) + " ./cmd/tickscope"
}

// checkHolder refuses --persist on Windows unless the windowless holder is
// beside exe and is a GUI-subsystem program. Without it tickscope does not
// make one by patching a copy of itself (the PE header's Subsystem field):
// a patched copy of a signed executable is no longer signed, and a program
// that writes a new executable beside itself is what antivirus software
// watches for; a user of the release has the holder already, and one who
// built tickscope with go build can build it with the same tool.
func checkHolder(sys seam.Executables, exe, holder string) error {
	subsystem, err := sys.ExeSubsystem(holder)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("--persist refused: the windowless holder %s is not beside %s (the logon task runs it so that no console window opens at logon); it ships in the release archive, or build it in tickscope's source directory with: %s", persist.HolderExeName, exe, BuildHolderCommand(holder))
	case err != nil:
		return &seam.OSError{Call: "read the PE header of " + holder, Err: err}
	case subsystem != seam.IMAGE_SUBSYSTEM_WINDOWS_GUI:
		return fmt.Errorf("--persist refused: %s is not a GUI-subsystem program (PE subsystem %d, not %d), so a console window would open at every logon; rebuild it in tickscope's source directory with: %s", holder, subsystem, seam.IMAGE_SUBSYSTEM_WINDOWS_GUI, BuildHolderCommand(holder))
	}
	return nil
}

// LogHolderOutput gives the startup holder a place for its output when it
// would otherwise go nowhere (the windowless holder has no console and no
// standard error): the log, emptied unless a holder already runs, with a
// first line saying when it started and with what, becomes its stdout and
// stderr. status prints its last line, which says that it holds, or why it
// stopped. Every other run keeps its output (it has a place, or it is not
// the startup holder, whose log it must not empty), as does a holder whose
// log cannot be made or is refused (a link, another's file: nothing could
// report it). The returned function closes the log.
func LogHolderOutput(sys LogSystem, args []string, stdout, stderr *io.Writer) (closeLog func()) {
	if sys.Console() != seam.ConsoleNone || !asStartup(args) {
		return func() {}
	}
	// A holder that already runs keeps its log: this start will fail on
	// the holder lock, and appends why after what the running one wrote.
	how := seam.StateReplace
	if _, running := sys.Holder(); running {
		how = seam.StateAppend
	}
	f, err := sys.OpenStateFile(timerstate.HolderLogName, how)
	if err != nil {
		return func() {}
	}
	fmt.Fprintf(f, "tickscope %s started %s: %s\n", version.String(), time.Now().Format(time.RFC3339), strings.Join(args, " "))
	*stdout, *stderr = f, f
	return func() { f.Close() }
}

// asStartup reports whether args run the startup holder: the holder
// command without --as-service, as the task and unit pass it, or apply
// --as-startup, as those of earlier versions do.
func asStartup(args []string) bool {
	if len(args) > 0 && args[0] == "holder" {
		return !slices.Contains(args, "--as-service") && !slices.Contains(args, "--as-service=true")
	}
	for _, a := range args {
		if a == "--as-startup" || a == "--as-startup=true" {
			return true
		}
	}
	return false
}

// taskUser is the SID the logon task names in its trigger and principal:
// without it a logon trigger fires at every user's logon, and a
// non-administrator may not register it at all (MS-TSCH).
func taskUser(sys seam.User) (string, error) {
	sid, err := sys.UserSID()
	if err != nil {
		return "", &seam.OSError{Call: "read this process's user (GetTokenInformation(TokenUser))", Err: err}
	}
	return sid, nil
}

// TemporaryBuild reports whether exe is go run's build in the temporary
// directory, which a startup holder must not point at.
func TemporaryBuild(tempDir, exe string) bool {
	dir, err := filepath.Rel(tempDir, exe)
	return err == nil && strings.HasPrefix(dir, "go-build")
}

func startupWhen(q *timerinfo.Report) string {
	if q.Windows != nil {
		return fmt.Sprintf("logon (after %d s)", StartupDelaySeconds)
	}
	return "boot"
}

// refuseForeign refuses to replace a startup definition tickscope did not
// write.
func refuseForeign(st seam.Startup) error {
	existing, err := st.Read()
	if err != nil || existing == nil {
		return err
	}
	if installed, err := persist.ParseDefinition(existing); err != nil || !installed.Ours() {
		return fmt.Errorf("a %s exists that tickscope did not create: it is left alone; delete it by hand with: %s", st.Describe(), st.DeleteByHand())
	}
	return nil
}

// refuseOtherUsers refuses to replace or delete a task of tickscope's
// whose principal is another user than the caller: the task's name is one
// for the whole machine (persist.TaskName), so an administrator's
// apply --persist or startup remove would otherwise take over or delete
// another user's holder because its marker is tickscope's. A definition
// without a principal (a systemd unit, or a task Wine keeps none for) is
// not refused.
func refuseOtherUsers(sys seam.User, st seam.Startup) error {
	existing, err := st.Read()
	if err != nil || existing == nil {
		return err
	}
	installed, err := persist.ParseDefinition(existing)
	if err != nil || installed.PrincipalUserID == "" {
		return nil
	}
	sid, err := sys.UserSID()
	if err != nil || strings.EqualFold(installed.PrincipalUserID, sid) {
		return nil
	}
	return fmt.Errorf("the %s is another user's (its principal is %s, you are %s): it is left alone; that user removes it with tickscope startup remove, or delete it by hand with: %s", st.Describe(), installed.PrincipalUserID, sid, st.DeleteByHand())
}

// awaitLooks and awaitEvery make the 2 s a started holder has to put its
// setting in force.
const (
	awaitLooks = 20
	awaitEvery = 100 * time.Millisecond
)

// awaitHolder looks every awaitEvery, looks times, for the holder to run
// (holder) with the setting in force.
func awaitHolder(host seam.Host, req timerinfo.Setting, holder func() (pid int, running bool), looks int, sleep func(time.Duration)) (pid int, ok bool) {
	for look := 0; look < looks; look++ {
		if look > 0 {
			sleep(awaitEvery)
		}
		var running bool
		if pid, running = holder(); !running {
			continue
		}
		if req.IsZero() {
			return pid, true
		}
		if q, err := host.Query(); err == nil && timerstate.InForce(q, req) {
			return pid, true
		}
	}
	return pid, false
}
