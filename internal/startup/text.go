package startup

import (
	"fmt"
	"io"
	"strings"

	"github.com/tickscope/tickscope/internal/persist"
)

// WritePersist is apply --persist: the definition with --dry-run, else
// what was installed and whether the holder runs.
func WritePersist(w io.Writer, r *PersistResult) {
	if r.Definition != "" {
		fmt.Fprint(w, r.Definition)
		return
	}
	as := ""
	if r.Account != "" {
		as = " as " + r.Account
	}
	fmt.Fprintf(w, "installed the %s: it runs %s %s%s at %s\n", r.Startup, r.Exe, strings.Join(r.Args, " "), as, r.When)
	fmt.Fprintln(w, "undo: tickscope startup remove")
	switch {
	case r.Running && len(r.While) > 0:
		fmt.Fprintf(w, "the holder runs%s: it holds the setting while %s runs\n", processSuffix(r.PID), strings.Join(r.While, " or "))
	case r.Running && r.PID != 0:
		fmt.Fprintf(w, "the holder runs (process %d) and the setting is in force\n", r.PID)
	case r.Running:
		fmt.Fprintln(w, "the holder runs and the setting is in force")
	}
}

func processSuffix(pid int) string {
	if pid == 0 {
		return ""
	}
	return fmt.Sprintf(" (process %d)", pid)
}

// PersistWarnings are apply --persist's warnings: the task names an
// elevated terminal's user, and the holder did not start or its setting
// did not appear.
func PersistWarnings(r *PersistResult) []string {
	var warnings []string
	if r.ElevatedUser {
		warnings = append(warnings, "this terminal runs elevated, so the task starts at the logon of the account it runs as: if you typed an administrator's credentials to elevate, that is the administrator's logon, not yours; run --persist from a terminal that is not elevated")
	}
	warnings = append(warnings, r.Notes...)
	if w := persistStartWarning(r); w != "" {
		warnings = append(warnings, w)
	}
	return warnings
}

func persistStartWarning(r *PersistResult) string {
	switch {
	case r.Definition != "" || r.Running:
		return ""
	case r.StartErr != nil:
		return fmt.Sprintf("starting it now failed: %v (it will start at the next %s)", r.StartErr, r.When)
	case r.Stopped != "":
		return fmt.Sprintf("the service stopped instead of holding (%s): its reason is in the Application event log, source %s", r.Stopped, persist.ServiceName)
	case r.Account != "":
		return "the setting did not appear within 10 s of starting the service: check with tickscope status"
	}
	if len(r.While) > 0 {
		return "the holder did not run within 2 s of starting it: check with tickscope status"
	}
	return "the setting did not appear within 2 s of starting the holder: check with tickscope status"
}

// WriteRemove is startup remove; the still-raised warning and what was
// left (RemoveResult.NotDone) are the command's.
func WriteRemove(w io.Writer, res *RemoveResult) {
	if !res.Installed && !res.Ended && (res.Service == nil || !res.Service.Installed && res.Service.Left == "") {
		fmt.Fprintf(w, "nothing to remove: no %s is installed and no holder runs\n", res.Startup)
	}
	switch {
	case res.Ended && res.HolderPID != 0:
		fmt.Fprintf(w, "ended the holder (process %d)\n", res.HolderPID)
	case res.Ended:
		fmt.Fprintln(w, "ended the holder (its process id was unreadable)")
	}
	if res.Deleted {
		fmt.Fprintf(w, "deleted the %s\n", res.Startup)
	}
	if sv := res.Service; sv != nil && sv.Installed {
		if sv.Stopped {
			fmt.Fprintf(w, "stopped the %s (process %d), which released its setting\n", sv.Service, sv.PID)
		}
		fmt.Fprintf(w, "deleted the %s\n", sv.Service)
	}
}
