package platform

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/persist"
)

// fakeSteps is a service manager holding at most the one service, which
// records the calls made and fails the one named in fail.
type fakeSteps struct {
	exists     bool
	start      uint32
	privileges []string // nil: the account's every privilege
	calls      []string
	fail       string
	// autoWithAll is set when the service was ever automatic while its
	// token kept every privilege of its account.
	autoWithAll bool
}

var errStep = errors.New("the step failed")

func (f *fakeSteps) step(name string) error {
	f.calls = append(f.calls, name)
	if name == f.fail {
		return fmt.Errorf("%s: %w", name, errStep)
	}
	return nil
}

func (f *fakeSteps) check() {
	if f.exists && f.start == persist.SERVICE_AUTO_START && f.privileges == nil {
		f.autoWithAll = true
	}
}

func (f *fakeSteps) open() (bool, error) { return f.exists, f.step("open") }

func (f *fakeSteps) create(def persist.Service) error {
	if err := f.step("create"); err != nil {
		return err
	}
	f.exists, f.start, f.privileges = true, def.StartType, nil
	f.check()
	return nil
}

func (f *fakeSteps) save() (func() error, error) {
	if err := f.step("save"); err != nil {
		return nil, err
	}
	start, privileges := f.start, f.privileges
	return func() error {
		if err := f.step("restore"); err != nil {
			return err
		}
		f.start, f.privileges = start, privileges
		f.check()
		return nil
	}, nil
}

func (f *fakeSteps) change(def persist.Service) error {
	if err := f.step("change"); err != nil {
		return err
	}
	f.start = def.StartType
	f.check()
	return nil
}

func (f *fakeSteps) setPrivileges(p []string) error {
	if err := f.step("privileges"); err != nil {
		return err
	}
	f.privileges = p
	return nil
}

func (f *fakeSteps) setStartType(start uint32) error {
	if err := f.step("start"); err != nil {
		return err
	}
	f.start = start
	f.check()
	return nil
}

func (f *fakeSteps) remove() error {
	if err := f.step("remove"); err != nil {
		return err
	}
	f.exists = false
	return nil
}

// The boot service is created (or changed) demand-start, given its
// required privileges, and only then made automatic; any failure undoes
// the install: a service created is deleted, one that existed is put back.
// At no point is it automatic with its account's every privilege.
func TestInstallServiceOrderAndUndo(t *testing.T) {
	def := persist.BootService(`C:\Program Files\tickscope\tickscope.exe`, []string{"--as-service"}, "d")
	tests := []struct {
		exists bool
		fail   string
		calls  string
		gone   bool // the service no longer exists
		start  uint32
	}{
		{false, "", "open create privileges start", false, persist.SERVICE_AUTO_START},
		{false, "create", "open create", true, 0},
		{false, "privileges", "open create privileges remove", true, 0},
		{false, "start", "open create privileges start remove", true, 0},
		{true, "", "open save change privileges start", false, persist.SERVICE_AUTO_START},
		{true, "save", "open save", false, persist.SERVICE_AUTO_START},
		{true, "change", "open save change restore", false, persist.SERVICE_AUTO_START},
		{true, "privileges", "open save change privileges restore", false, persist.SERVICE_AUTO_START},
		{true, "start", "open save change privileges start restore", false, persist.SERVICE_AUTO_START},
	}
	for _, tt := range tests {
		f := &fakeSteps{fail: tt.fail}
		if tt.exists {
			// An install of an earlier tickscope: automatic, with its
			// privileges already restricted.
			f.exists, f.start, f.privileges = true, persist.SERVICE_AUTO_START, slices.Clone(persist.ServicePrivileges)
		}
		err := installService(f, def)
		name := fmt.Sprintf("exists=%v fail=%q", tt.exists, tt.fail)
		if got := strings.Join(f.calls, " "); got != tt.calls {
			t.Errorf("%s: calls %q, want %q", name, got, tt.calls)
		}
		if (err != nil) != (tt.fail != "") || (err != nil && !errors.Is(err, errStep)) {
			t.Errorf("%s: error %v", name, err)
		}
		if f.autoWithAll {
			t.Errorf("%s: the service was automatic with every privilege of its account", name)
		}
		if gone := !f.exists; gone != tt.gone {
			t.Errorf("%s: the service exists=%v afterwards", name, f.exists)
		}
		if f.exists && f.start != tt.start {
			t.Errorf("%s: start type %d afterwards, want %d", name, f.start, tt.start)
		}
		if f.exists && tt.fail == "" && !slices.Equal(f.privileges, persist.ServicePrivileges) {
			t.Errorf("%s: privileges %v, want %v", name, f.privileges, persist.ServicePrivileges)
		}
	}
}

// An undo that fails too is said, with both errors.
func TestInstallServiceUndoFails(t *testing.T) {
	f := &fakeSteps{fail: "privileges"}
	def := persist.BootService(`C:\t.exe`, nil, "d")
	steps := &failingRemove{f}
	err := installService(steps, def)
	if err == nil || !errors.Is(err, errStep) || !strings.Contains(err.Error(), "by hand") {
		t.Errorf("error %v, want the step's and the undo's", err)
	}
}

type failingRemove struct{ *fakeSteps }

func (f *failingRemove) remove() error { return errors.New("DeleteService: access denied") }
