package platform

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/svc/mgr"

	"github.com/tickscope/tickscope/internal/persist"
)

// failPrivileges are the service manager's steps with setPrivileges
// failing, as it would on a manager that refuses the list.
type failPrivileges struct{ *managerSteps }

func (f failPrivileges) setPrivileges([]string) error { return errors.New("refused") }

// The boot service's install on the service manager, under a name of its
// own: installed, it is automatic and reads back as defined; reinstalled
// with its privileges refused, it is put back; installed afresh with them
// refused, it is deleted. It needs an administrator (Wine's prefix user
// is one).
func TestInstallServiceOnTheManager(t *testing.T) {
	name := fmt.Sprintf("tickscope-test-%d", os.Getpid())
	manager, err := mgr.Connect()
	if err != nil {
		t.Skipf("the service manager refuses this process (not an administrator?): %v", err)
	}
	defer manager.Disconnect()
	def := persist.BootService(`C:\Program Files\tickscope\tickscope.exe`, []string{"--as-service"}, "the first")
	def.Name = name
	steps := &managerSteps{manager: manager.Handle, name: name}
	if err := installService(steps, def); err != nil {
		t.Fatalf("installing: %v", err)
	}
	t.Cleanup(func() {
		steps.remove()
		steps.close()
	})
	read := func() persist.Service {
		t.Helper()
		text, err := bootService{name: name}.Read()
		if err != nil || text == nil {
			t.Fatalf("reading the service back: %q, %v", text, err)
		}
		got, err := persist.ParseService(string(text))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := read(); got.StartType != persist.SERVICE_AUTO_START || got.Description != "the first" || !strings.EqualFold(got.Account, persist.ServiceAccount) {
		t.Errorf("installed %+v, want automatic, as %s, described", got, persist.ServiceAccount)
	}

	// A reinstall whose privileges are refused puts the service back.
	again := def
	again.Description = "the second"
	again.CommandLine = `"C:\elsewhere\tickscope.exe" --as-service`
	steps.close()
	if err := installService(failPrivileges{steps}, again); err == nil || !strings.Contains(err.Error(), "put back") {
		t.Errorf("a reinstall with its privileges refused: %v, want it put back", err)
	}
	if got := read(); got.StartType != persist.SERVICE_AUTO_START || got.Description != "the first" || got.CommandLine != def.CommandLine {
		t.Errorf("after a failed reinstall: %+v, want it as it was", got)
	}

	// An install afresh whose privileges are refused deletes it.
	steps.remove()
	steps.close()
	fresh := &managerSteps{manager: manager.Handle, name: name + "-b"}
	freshDef := def
	freshDef.Name = fresh.name
	err = installService(failPrivileges{fresh}, freshDef)
	fresh.close()
	if err == nil || !strings.Contains(err.Error(), "deleted") {
		t.Errorf("an install with its privileges refused: %v, want it deleted", err)
	}
	h, err := windows.OpenService(manager.Handle, utf16Ptr(fresh.name), windows.SERVICE_QUERY_STATUS)
	if err == nil {
		windows.CloseServiceHandle(h)
		t.Errorf("the service %s exists after its install failed", fresh.name)
		fresh.open()
		fresh.remove()
		fresh.close()
	}
}
