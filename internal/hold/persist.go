package hold

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
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
	// 2 s of its start, and PID its process id (0 when unreadable).
	Running bool
	PID     int
}

// Persist registers the startup holder with args, starts it, and checks for
// up to 2 s that the setting appears. It refuses a holder that would hold
// nothing useful or could not be removed cleanly: while requests are
// per-process (Windows), without root (Linux), from go run's temporary
// build, from a path Task Scheduler would expand, and over a definition
// tickscope did not write.
func Persist(host seam.Host, sys seam.System, q *timerinfo.Report, req timerinfo.Setting, args []string, o PersistOptions) (*PersistResult, error) {
	st := sys.Startup()
	if st == nil {
		return nil, fmt.Errorf("--persist: %w", seam.ErrUnsupported)
	}
	if q.Windows != nil {
		if warning := q.Windows.PendingRebootWarning(); warning != "" {
			// The kernel reads the key at boot: a holder registered now would
			// hold a request that reaches only itself until the reboot.
			return nil, fmt.Errorf("--persist refused until the key is in force: %s", warning)
		}
		if !q.Windows.RequestsGlobal() {
			return nil, fmt.Errorf("--persist refused: requests are per-process here (%s), so a holder at logon would speed up only itself; %s", q.Windows.RequestModel, q.Windows.GlobalAdvice())
		}
	} else if !sys.Elevated() {
		return nil, errors.New("--persist installs a systemd system unit and needs root")
	}
	exe, err := sys.Executable()
	if err != nil {
		return nil, &seam.OSError{Call: "find this executable", Err: err}
	}
	if TemporaryBuild(sys.TempDir(), exe) {
		return nil, fmt.Errorf("--persist refused: %s is a temporary build (go run) that will be deleted; build tickscope with go build or go install and run --persist from that binary", exe)
	}
	if err := refuseForeign(st); err != nil {
		return nil, err
	}
	description := fmt.Sprintf("Holds %s (tickscope %s). Remove with: tickscope startup remove %s", req, args[0], persist.Marker(o.Version))
	var definition []byte
	if q.Windows != nil {
		if name := persist.ExpandedByTaskScheduler(exe, sys.LookupEnv); name != "" {
			return nil, fmt.Errorf("--persist refused: the path %s contains %%%s%%, which Task Scheduler would expand; move tickscope elsewhere", exe, name)
		}
		sid, err := taskUser(sys)
		if err != nil {
			return nil, err
		}
		if definition, err = persist.TaskXML(persist.Task{Exe: exe, Args: args, Description: description, DelaySeconds: StartupDelaySeconds, UserSID: sid}); err != nil {
			return nil, err
		}
	} else {
		definition = []byte(persist.SystemdUnit(persist.Unit{Exe: exe, Args: args, Description: description}))
	}
	res := &PersistResult{Startup: st.Describe(), Exe: exe, Args: args, When: startupWhen(q)}
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
	res.PID, res.Running = awaitHolder(host, sys, req, sleep)
	return res, nil
}

// taskUser is the SID the logon task names in its trigger and principal:
// without it a logon trigger fires at every user's logon, and a
// non-administrator may not register it at all (MS-TSCH).
func taskUser(sys seam.System) (string, error) {
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
	if installed, err := parseDefinition(existing); err != nil || !installed.Ours() {
		return fmt.Errorf("a %s exists that tickscope did not create: it is left alone; delete it by hand with: %s", st.Describe(), st.DeleteByHand())
	}
	return nil
}

// parseDefinition reads a startup definition: a task's XML (UTF-16 or
// UTF-8) or a systemd unit. A definition neither parser reads is not
// tickscope's.
func parseDefinition(data []byte) (persist.Installed, error) {
	text, err := persist.DefinitionText(data)
	if err != nil {
		return persist.Installed{}, err
	}
	if strings.HasPrefix(strings.TrimSpace(text), "<") {
		return persist.ParseTask(data)
	}
	return persist.ParseUnit(text)
}

// awaitLooks and awaitEvery make the 2 s a started holder has to put its
// setting in force.
const (
	awaitLooks = 20
	awaitEvery = 100 * time.Millisecond
)

// awaitHolder looks for up to 2 s for the startup holder to run with the
// setting in force.
func awaitHolder(host seam.Host, sys seam.System, req timerinfo.Setting, sleep func(time.Duration)) (pid int, ok bool) {
	for look := 0; look < awaitLooks; look++ {
		if look > 0 {
			sleep(awaitEvery)
		}
		var running bool
		if pid, running = sys.Holder(); !running {
			continue
		}
		if q, err := host.Query(); err == nil && inForce(q, req) {
			return pid, true
		}
	}
	return pid, false
}

// inForce reports whether the machine has req (or finer) in force.
func inForce(q *timerinfo.Report, req timerinfo.Setting) bool {
	switch {
	case q.Windows != nil:
		return timerinfo.PeriodInForce(q.Windows.Current100ns, req.Resolution100ns)
	case q.Linux != nil:
		return q.Linux.CPUDMALatencyUs != nil && req.CPUDMALatencyUs != nil && *q.Linux.CPUDMALatencyUs <= *req.CPUDMALatencyUs
	}
	return false
}
