package startup

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/timerstate"
)

// ErrBootNeedsElevation is apply --persist --boot's refusal without
// elevation: only an administrator may install a service.
var ErrBootNeedsElevation = errors.New("--persist --boot installs a Windows service, which needs an elevated tickscope: run it from a terminal opened with Run as administrator (nothing was changed; --dry-run shows the service without elevation)")

// ErrRemoveNeedsElevation is why startup remove leaves the boot service
// installed without elevation.
var ErrRemoveNeedsElevation = errors.New("the Windows service " + persist.ServiceName + " is installed, and stopping and deleting a service needs an elevated tickscope: it is left as it was; run startup remove from a terminal opened with Run as administrator to remove it")

// serviceAwaitLooks make the 10 s a started service has to hold its
// setting: the service manager starts a process, which measures the
// setting briefly before it tells the manager it runs.
const serviceAwaitLooks = 100

// persistBoot installs and starts the boot service (apply --persist
// --boot). It refuses where the service would hold nothing useful (requests
// per-process, the key not yet in force), without elevation (except for
// --dry-run, which changes nothing), from go run's temporary build, from
// outside the protected directories (the service runs its executable under
// its own account at every boot: one a user could replace would be theirs
// to run), and over a service of that name tickscope did not create. A
// service of tickscope's that runs is stopped first, so that the new
// setting is the one held, and started again when the new one cannot be
// installed.
func persistBoot(host seam.Host, sys System, q *timerinfo.Report, req timerinfo.Setting, args []string, o PersistOptions) (*PersistResult, error) {
	sv := sys.BootService()
	if sv == nil || q.Windows == nil {
		return nil, fmt.Errorf("--persist --boot: %w", seam.ErrUnsupported)
	}
	if err := refuseUseless(q.Windows, "a service at boot", nil); err != nil {
		return nil, err
	}
	if !o.DryRun && !sys.Elevated() {
		return nil, ErrBootNeedsElevation
	}
	exe, err := sys.Executable()
	if err != nil {
		return nil, &seam.OSError{Call: "find this executable", Err: err}
	}
	if TemporaryBuild(sys.GoRunTempDir(), exe) {
		return nil, fmt.Errorf("--persist refused: %s is a temporary build (go run) that will be deleted; build tickscope with go build or go install and run --persist from that binary", exe)
	}
	if err := checkProtected(sv, exe); err != nil {
		return nil, err
	}
	if err := refuseForeign(sv); err != nil {
		return nil, err
	}
	description := fmt.Sprintf("Holds %s from boot (tickscope %s). Remove with: tickscope startup remove %s", req, args[0], persist.Marker(o.Version))
	definition := persist.ServiceText(persist.BootService(exe, args, description))
	res := &PersistResult{Startup: sv.Describe(), Exe: exe, Args: args, When: "boot", Account: persist.ServiceAccount}
	if o.DryRun {
		res.Definition = definition
		if !sys.Elevated() {
			res.Notes = append(res.Notes, "installing it needs an elevated tickscope")
		}
		return res, nil
	}
	state, err := sv.State()
	if err != nil {
		return nil, err
	}
	if state.Running() {
		if err := sv.Stop(); err != nil {
			return nil, err
		}
	}
	if err := sv.Install([]byte(definition)); err != nil {
		if !state.Running() {
			return nil, err
		}
		// The old service was stopped only to be replaced: a failed
		// replacement leaves it as it was, running.
		if startErr := sv.Start(); startErr != nil {
			return nil, fmt.Errorf("%w; the service that ran before was stopped to be replaced, and starting it again failed too: %v", err, startErr)
		}
		return nil, fmt.Errorf("%w; the service that ran before was started again", err)
	}
	// What the service manager kept: one that keeps no privilege list
	// (Wine's) leaves the service every privilege of its account.
	if back, err := sv.Read(); err == nil && back != nil {
		if installed, err := persist.ParseService(string(back)); err == nil && installed.Privileges == nil {
			res.Notes = append(res.Notes, fmt.Sprintf("the service manager keeps no list of required privileges here, so the service has all of %s's privileges, not only %s", persist.ServiceAccount, strings.Join(persist.ServicePrivileges, ", ")))
		}
	}
	if res.StartErr = sv.Start(); res.StartErr != nil {
		return res, nil
	}
	sleep := o.Sleep
	if sleep == nil {
		sleep = time.Sleep
	}
	res.PID, res.Running, res.Stopped = awaitService(host, sv, req, sleep)
	return res, nil
}

// awaitService looks for up to 10 s for the service to run with the
// setting in force; stopped says why it stopped instead, "" when it did
// not.
func awaitService(host seam.Host, sv seam.Service, req timerinfo.Setting, sleep func(time.Duration)) (pid int, ok bool, stopped string) {
	for look := 0; look < serviceAwaitLooks; look++ {
		if look > 0 {
			sleep(awaitEvery)
		}
		state, err := sv.State()
		if err != nil {
			continue
		}
		pid = state.PID
		switch state.State {
		case "stopped":
			return 0, false, timerstate.ServiceExit(state)
		case "running":
			if q, err := host.Query(); err == nil && timerstate.InForce(q, req) {
				return pid, true, ""
			}
		}
	}
	return pid, false, ""
}

// checkProtected refuses an executable outside the service's protected
// directories.
func checkProtected(sv seam.Service, exe string) error {
	dirs, err := sv.ProtectedDirs()
	if err != nil {
		return err
	}
	for _, dir := range dirs {
		if InsideDir(exe, dir) {
			return nil
		}
	}
	where := `C:\Program Files`
	if len(dirs) > 0 {
		where = dirs[0]
	}
	return fmt.Errorf("--persist --boot refused: the service would run %s as %s at every boot, and a folder outside %s may let non-administrators replace it (and so run their program as the service); copy tickscope.exe into %s and run --persist --boot from there", exe, persist.ServiceAccount, strings.Join(dirs, " or "), where+`\tickscope`)
}

// InsideDir reports whether the Windows path lies inside dir: compared by
// elements on either slash, with ASCII letters in either case, as the
// file system compares them. Any other letter must match exactly, so that a
// look-alike (Program Fileſ) is not taken for the folder; a path with a .
// or .. element, or an empty one, is never inside.
func InsideDir(path, dir string) bool {
	split := func(p string) []string {
		return strings.FieldsFunc(p, func(r rune) bool { return r == '\\' || r == '/' })
	}
	pathElems, dirElems := split(path), split(dir)
	if len(dirElems) == 0 || len(pathElems) <= len(dirElems) || strings.Contains(strings.ReplaceAll(path, "/", `\`), `\\`) {
		return false
	}
	for _, e := range pathElems {
		if e == "." || e == ".." {
			return false
		}
	}
	for i, e := range dirElems {
		if !asciiEqualFold(pathElems[i], e) {
			return false
		}
	}
	return true
}

func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		ca, cb := a[i], b[i]
		if 'A' <= ca && ca <= 'Z' {
			ca += 'a' - 'A'
		}
		if 'A' <= cb && cb <= 'Z' {
			cb += 'a' - 'A'
		}
		if ca != cb {
			return false
		}
	}
	return true
}
