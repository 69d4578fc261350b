package startup

import (
	"fmt"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// RemoveResult is what startup remove prints as JSON.
type RemoveResult struct {
	Startup   string `json:"startup"`
	Installed bool   `json:"installed"`
	HolderPID int    `json:"holder_pid"`
	Ended     bool   `json:"ended"`
	Deleted   bool   `json:"deleted"`
	// StillRaised describes a setting still in force afterwards, or "".
	StillRaised string `json:"still_raised"`
	// Service is the boot service (Windows), nil where the OS has none.
	Service *ServiceRemoval `json:"service"`
}

// ServiceRemoval is what startup remove did to the boot service.
type ServiceRemoval struct {
	Service   string `json:"service"`
	Installed bool   `json:"installed"`
	// PID is the service's process when it ran, Stopped whether it was
	// stopped.
	PID     int  `json:"pid"`
	Stopped bool `json:"stopped"`
	Deleted bool `json:"deleted"`
	// Left says what was found and why it was left installed (a service
	// of that name tickscope did not create, or no elevation to remove
	// tickscope's), "" when nothing was left.
	Left string `json:"left"`
}

// NotDone is what startup remove was asked and did not do, "" when it
// did everything: then its exit status is 0.
func (r *RemoveResult) NotDone() string {
	if r.Service != nil {
		return r.Service.Left
	}
	return ""
}

// RemoveStartup ends a running startup holder and deletes the definition
// apply --persist installed, and stops and deletes the boot service apply
// --persist --boot installed (elevated only). A logon definition tickscope
// did not write is left alone, with the command that deletes it by hand,
// and so is everything else then. The boot service is the machine's, not
// the user's: a service of that name tickscope did not create, or
// tickscope's own without elevation, is left installed and said why
// (RemoveResult.NotDone), and the user's own holder is removed all the
// same. Afterwards it says when the timer is still at or finer than what
// the holder held (another program's request, which the user may have
// expected to end too).
func RemoveStartup(host seam.Host, sys System) (*RemoveResult, error) {
	st := sys.Startup()
	if st == nil {
		name := "this OS"
		if q, err := host.Query(); err == nil {
			name = q.OS
		}
		return nil, options.Usagef("tickscope startup remove: %s has no startup holder", name)
	}
	res := &RemoveResult{Startup: st.Describe()}
	definition, err := st.Read()
	if err != nil {
		return nil, err
	}
	// held is what the removed holders held: afterwards only a timer still
	// at or finer than it is worth a warning (TickTune's rule).
	var held timerinfo.Setting
	if definition != nil {
		installed, err := persist.ParseDefinition(definition)
		if err != nil || !installed.Ours() {
			return nil, fmt.Errorf("the %s was not created by tickscope: it is left alone; delete it by hand with: %s", st.Describe(), st.DeleteByHand())
		}
		if err := refuseOtherUsers(sys, st); err != nil {
			return nil, err
		}
		res.Installed = true
		held = installed.HeldSetting()
	}
	// The boot service is read before anything is changed, so that a
	// failure to read it changes nothing.
	sv := sys.BootService()
	var serviceHeld timerinfo.Setting
	if sv != nil {
		res.Service = &ServiceRemoval{Service: sv.Describe()}
		if serviceHeld, err = checkServiceRemovable(sys, sv, res.Service); err != nil {
			return nil, err
		}
	}
	// A holder whose process id is unreadable still runs: Stop ends it by
	// the mechanism's own means or says why it cannot, instead of passing
	// over it.
	pid, running := sys.Holder()
	res.HolderPID = pid
	if running || res.Installed {
		if err := st.Stop(); err != nil {
			return nil, err
		}
		res.Ended = running
	}
	if res.Installed {
		if err := st.Delete(); err != nil {
			return nil, err
		}
		res.Deleted = true
	}
	if res.Service != nil && res.Service.Installed {
		if err := removeService(sv, res.Service); err != nil {
			return nil, err
		}
		held = coarser(held, serviceHeld)
	}
	if q, err := host.Query(); err == nil {
		res.StillRaised = q.StillRaised(held)
	}
	return res, nil
}

// checkServiceRemovable reads the boot service: a service of that name
// tickscope did not create is left alone (r.Left, with the command that
// deletes it by hand), and so is one of tickscope's without elevation,
// which removing it needs. It returns the setting the service holds when
// it is to be removed.
func checkServiceRemovable(sys seam.User, sv seam.Service, r *ServiceRemoval) (timerinfo.Setting, error) {
	definition, err := sv.Read()
	if err != nil || definition == nil {
		return timerinfo.Setting{}, err
	}
	installed, err := persist.ParseDefinition(definition)
	switch {
	case err != nil || !installed.Ours():
		r.Left = fmt.Sprintf("the %s was not created by tickscope: it is left alone; delete it by hand, elevated, with: %s", sv.Describe(), sv.DeleteByHand())
		return timerinfo.Setting{}, nil
	case !sys.Elevated():
		r.Left = ErrRemoveNeedsElevation.Error()
		return timerinfo.Setting{}, nil
	}
	r.Installed = true
	return installed.HeldSetting(), nil
}

// removeService stops the service, which releases its setting, then
// deletes it.
func removeService(sv seam.Service, r *ServiceRemoval) error {
	state, err := sv.State()
	if err != nil {
		return err
	}
	if state.Running() {
		r.PID = state.PID
		if err := sv.Stop(); err != nil {
			return err
		}
		r.Stopped = true
	}
	if err := sv.Delete(); err != nil {
		return err
	}
	r.Deleted = true
	return nil
}

// coarser is the coarser of two held settings (a zero one aside): the
// timer still at or finer than it afterwards is another program's doing.
func coarser(a, b timerinfo.Setting) timerinfo.Setting {
	if a.IsZero() {
		return b
	}
	if !b.IsZero() && b.Resolution100ns > a.Resolution100ns {
		return b
	}
	return a
}
