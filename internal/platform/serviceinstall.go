package platform

import (
	"fmt"

	"github.com/tickscope/tickscope/internal/persist"
)

// serviceSteps are the service manager's calls that install the boot
// service, one a method, so that installService's order and its undo are
// the same code on every OS and tested where no service manager is.
type serviceSteps interface {
	// open opens the installed service of the definition's name; found is
	// false when there is none.
	open() (found bool, err error)
	// create creates the service def describes (CreateServiceW) and its
	// description.
	create(def persist.Service) error
	// save reads the opened service's configuration, description and
	// required privileges, and returns what puts them back.
	save() (restore func() error, err error)
	// change makes the opened service what def describes
	// (ChangeServiceConfigW, ChangeServiceConfig2W for the description).
	change(def persist.Service) error
	// setPrivileges makes privileges the only ones the service's token
	// keeps; a manager that keeps no list (Wine's) is not an error.
	setPrivileges(privileges []string) error
	// setStartType changes the start type alone.
	setStartType(start uint32) error
	// remove deletes the service created.
	remove() error
}

// installService installs def so that the service is never an automatic
// one with its account's every privilege, not even for a moment or after a
// failure: it is created (or changed) demand-start, its required
// privileges are set, and only then is it switched to def's start type.
// A failure at any step undoes what was done: a service it created is
// deleted, an existing one (tickscope's, which apply --persist checked)
// is put back as it was.
func installService(s serviceSteps, def persist.Service) error {
	demand := def
	demand.StartType = persist.SERVICE_DEMAND_START
	found, err := s.open()
	if err != nil {
		return err
	}
	undo, done := s.remove, "deleted again"
	if found {
		if undo, err = s.save(); err != nil {
			return err
		}
		done = "put back as it was"
		if err := s.change(demand); err != nil {
			return undone(err, undo, done)
		}
	} else if err := s.create(demand); err != nil {
		return err
	}
	if err := s.setPrivileges(def.Privileges); err != nil {
		return undone(err, undo, done)
	}
	if def.StartType != demand.StartType {
		if err := s.setStartType(def.StartType); err != nil {
			return undone(err, undo, done)
		}
	}
	return nil
}

// undone undoes a failed install and says so: err, and whether the undo
// (what it did: done) failed too.
func undone(err error, undo func() error, done string) error {
	if uerr := undo(); uerr != nil {
		return fmt.Errorf("%w; undoing the install failed too, remove or check the service by hand: %w", err, uerr)
	}
	return fmt.Errorf("%w (the service was %s)", err, done)
}
