package hold

import (
	"fmt"

	"github.com/tickscope/tickscope/internal/options"
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
}

// RemoveStartup ends a running startup holder and deletes the definition
// apply --persist installed. A definition tickscope did not write is left
// alone, with the command that deletes it by hand. Afterwards it says when
// the timer is still at or finer than what the holder held (another
// program's request, which the user may have expected to end too).
func RemoveStartup(host seam.Host, sys seam.System) (*RemoveResult, error) {
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
	// held is what the removed holder held: afterwards only a timer still
	// at or finer than it is worth a warning (TickTune's rule).
	var held timerinfo.Setting
	if definition != nil {
		installed, err := parseDefinition(definition)
		if err != nil || !installed.Ours() {
			return nil, fmt.Errorf("the %s was not created by tickscope: it is left alone; delete it by hand with: %s", st.Describe(), st.DeleteByHand())
		}
		res.Installed = true
		held = installed.HeldSetting()
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
	if q, err := host.Query(); err == nil {
		res.StillRaised = q.StillRaised(held)
	}
	return res, nil
}
