package platform

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/seam"
)

func slackPath(pid int) string { return "/proc/" + strconv.Itoa(pid) + "/timerslack_ns" }

func (system) ProcessSlack(pid int) (int64, error) {
	// /proc/PID/timerslack_ns is the slack of the process's main thread.
	data, err := os.ReadFile(slackPath(pid))
	if errors.Is(err, os.ErrNotExist) {
		return 0, &seam.OSError{Call: "read " + slackPath(pid), Err: fmt.Errorf("%w (process %d)", seam.ErrNoProcess, pid)}
	}
	if err != nil {
		return 0, &seam.OSError{Call: "read " + slackPath(pid) + " (needs CAP_SYS_NICE for another user's process)", Err: err}
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0, &seam.OSError{Call: "read " + slackPath(pid), Err: err}
	}
	return ns, nil
}

func (system) SetProcessSlack(pid int, ns int64) error {
	// Writing /proc/PID/timerslack_ns needs CAP_SYS_NICE.
	f, err := os.OpenFile(slackPath(pid), os.O_WRONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return &seam.OSError{Call: "open " + slackPath(pid), Err: fmt.Errorf("%w (process %d)", seam.ErrNoProcess, pid)}
	}
	if err == nil {
		_, err = f.WriteString(strconv.FormatInt(ns, 10))
		if closeErr := f.Close(); err == nil {
			err = closeErr
		}
	}
	if err != nil {
		return &seam.OSError{Call: "write " + slackPath(pid) + " (needs CAP_SYS_NICE)", Err: err}
	}
	return nil
}

func (system) Startup() seam.Startup { return unitStartup{dir: "/etc/systemd/system"} }

// unitStartup is the systemd system unit tickscope-holder.service.
type unitStartup struct{ dir string }

func (u unitStartup) path() string { return filepath.Join(u.dir, persist.UnitName) }

func (u unitStartup) Describe() string { return "systemd unit " + u.path() }

// systemdRuns is systemd's own test (sd_booted): it runs as init when
// /run/systemd/system exists.
func systemdRuns() bool {
	fi, err := os.Stat("/run/systemd/system")
	return err == nil && fi.IsDir()
}

func systemctl(args ...string) error {
	if !systemdRuns() {
		return &seam.OSError{Call: "systemctl " + strings.Join(args, " "), Err: errors.New("systemd is not running on this machine (no /run/systemd/system)")}
	}
	out, err := exec.Command("systemctl", args...).CombinedOutput()
	if err != nil {
		return &seam.OSError{Call: "systemctl " + strings.Join(args, " "), Err: fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))}
	}
	return nil
}

func (u unitStartup) Read() ([]byte, error) {
	data, err := os.ReadFile(u.path())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &seam.OSError{Call: "read " + u.path(), Err: err}
	}
	return data, nil
}

// Install writes the unit, then reloads systemd and enables it. Without
// systemd it writes nothing.
func (u unitStartup) Install(definition []byte) error {
	if !systemdRuns() {
		return &seam.OSError{Call: "install " + u.path(), Err: errors.New("systemd is not running on this machine (no /run/systemd/system): nothing was installed")}
	}
	tmp := u.path() + ".tmp"
	if err := os.WriteFile(tmp, definition, 0o644); err != nil {
		return &seam.OSError{Call: "write " + tmp, Err: err}
	}
	if err := os.Rename(tmp, u.path()); err != nil {
		os.Remove(tmp)
		return &seam.OSError{Call: "rename " + tmp, Err: err}
	}
	if err := systemctl("daemon-reload"); err != nil {
		return err
	}
	return systemctl("enable", persist.UnitName)
}

func (u unitStartup) Start() error { return systemctl("start", persist.UnitName) }

// Stop stops the unit where systemd runs, and ends a holder started by
// hand, the process its lock's record names, if it is this tickscope's
// (endHolder).
func (u unitStartup) Stop() error {
	if systemdRuns() {
		if data, _ := u.Read(); data != nil {
			if err := systemctl("stop", persist.UnitName); err != nil {
				return err
			}
		}
	}
	return endHolder()
}

func (u unitStartup) Delete() error {
	if systemdRuns() {
		if err := systemctl("disable", persist.UnitName); err != nil {
			return err
		}
	}
	if err := os.Remove(u.path()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return &seam.OSError{Call: "remove " + u.path(), Err: err}
	}
	if systemdRuns() {
		return systemctl("daemon-reload")
	}
	return nil
}

func (u unitStartup) DeleteByHand() string {
	return "systemctl disable --now " + persist.UnitName + " && rm " + u.path()
}

// SleptFor is CLOCK_BOOTTIME less CLOCK_MONOTONIC: both count from boot,
// and only the first goes on while the machine is suspended.
func (system) SleptFor() (time.Duration, bool) {
	var boot, mono unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &boot) != nil || unix.ClockGettime(unix.CLOCK_MONOTONIC, &mono) != nil {
		return 0, false
	}
	return time.Duration(boot.Nano() - mono.Nano()), true
}
