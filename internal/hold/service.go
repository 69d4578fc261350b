package hold

import (
	"context"
	"fmt"
	"time"

	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// HoldAsService holds req as the boot service (apply --as-service, as the
// service's command line passes it): under the service manager, which
// shows the service running once the setting is held and checked, and
// ends the hold with Stop or Shutdown, when the setting is released. Its
// lines (what it holds, each re-apply, why it stopped) go to the event
// log. It fails at once in a process the service manager did not start.
func HoldAsService(host seam.Host, sys ServiceSystem, req timerinfo.Setting) error {
	return sys.RunService(persist.ServiceName, func(ctx context.Context, run seam.ServiceRun) error {
		q, err := host.Query()
		if err != nil {
			run.Log("error", fmt.Sprintf("tickscope could not read the timer: %v", err))
			return err
		}
		rep, err := Hold(ctx, host, sys, q, req, HoldOptions{
			NoEsc: true,
			Warn:  func(msg string) { run.Log("warning", msg) },
			Holding: func(rep *HoldReport) {
				run.Log("info", HoldingLine(rep))
				for _, w := range rep.Warnings {
					run.Log("warning", w)
				}
				run.Running()
			},
		})
		if err != nil {
			run.Log("error", fmt.Sprintf("tickscope could not hold %s: %v", req, err))
			return err
		}
		run.Log("info", fmt.Sprintf("released %s after %v: the service manager stopped the service (%d re-applies)", req, time.Duration(rep.HeldNs).Round(time.Second), rep.Reapplies))
		return nil
	})
}

// HoldingLine is the service's line once it holds: the grant, and whom the
// request reaches.
func HoldingLine(rep *HoldReport) string {
	line := fmt.Sprintf("holding %s (granted %s ms) as the %s service", rep.Requested, timerinfo.FormatPeriodMS(rep.Granted.Resolution100ns), persist.ServiceName)
	if rep.Reach != "" {
		line += "; it reaches " + rep.Reach
	}
	return line
}
