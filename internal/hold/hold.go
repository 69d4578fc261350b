// Package hold decides and does what the hold commands do: apply (hold a
// setting, set another process's slack, hold as the boot service) and run.
// It holds their refusal rules and their results (the JSON shapes of
// docs/json.md), as functions of the seam's Host and of the OS roles each
// action uses (System for a hold), so that the rules are tested against
// the model of Windows timers and an in-memory System (package sim).
// Package report renders the results as text; cmd/tickscope parses the
// command line, calls here, and prints.
package hold

import (
	"fmt"

	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// holdSetting requests a setting from the calling (locked) thread; release
// withdraws it and reports a failure to warn.
func holdSetting(host seam.Host, s timerinfo.Setting, warn func(string)) (granted timerinfo.Setting, release func(), err error) {
	granted, withdraw, err := host.Apply(s)
	if err != nil {
		return granted, nil, err
	}
	return granted, func() {
		if err := withdraw(); err != nil && warn != nil {
			warn(fmt.Sprintf("releasing %s: %v", s, err))
		}
	}, nil
}
