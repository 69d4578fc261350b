package startup_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/sim/simtest"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/timerstate"
)

type linuxHost struct {
	seam.Host
	dma int32
}

func (h *linuxHost) Query() (*timerinfo.Report, error) { return simtest.LinuxReport(h.dma), nil }

func wantError(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want one containing %q", err, want)
	}
}

func isUsage(err error) bool {
	var usage *options.UsageError
	return errors.As(err, &usage)
}

var bootArgs = []string{"holder", "--as-service", "--resolution", "10000", "--no-esc"}

func bootMachine(t *testing.T) (*simtest.WindowsHost, *sim.System, *sim.Service) {
	h, sys, _ := simtest.PersistMachine(t)
	sys.Exe, sys.IsElevated = simtest.BootExe, true
	return h, sys, sys.NewBootService("Windows service tickscope")
}

func serviceOf(exe string, ours bool) []byte {
	description := "someone else's service"
	if ours {
		description = "Holds 1 ms from boot. " + persist.Marker("0.1.0")
	}
	return []byte(persist.ServiceText(persist.BootService(exe, []string{"apply", "--resolution", "10000", "--no-esc", "--as-service"}, description)))
}

func (u *unrestrictingService) Install(definition []byte) error {
	s, err := persist.ParseService(string(definition))
	if err != nil {
		return err
	}
	s.Privileges = nil
	return u.Service.Install([]byte(persist.ServiceText(s)))
}

type bootSystem struct {
	*sim.System
	sv seam.Service
}

func (b *bootSystem) BootService() seam.Service { return b.sv }

func (s *subsystemErr) ExeSubsystem(string) (uint16, error) { return 0, s.err }

// holderLog is the holder's log in sys's state directory.
func holderLog(t *testing.T, sys seam.System) string {
	t.Helper()
	dir, err := sys.StateDir()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, timerstate.HolderLogName)
}
