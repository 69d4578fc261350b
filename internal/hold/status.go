package hold

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// StatusReport is what status prints as JSON.
type StatusReport struct {
	Self    SelfCheck         `json:"self"`
	Query   *timerinfo.Report `json:"query"`
	Startup *StartupState     `json:"startup"`
}

// SelfCheck is the default wait in this process without and with a
// request of its own.
type SelfCheck struct {
	Without     *WaitCheck        `json:"without_request"`
	WithSetting timerinfo.Setting `json:"with_setting"`
	With        *WaitCheck        `json:"with_request"`
}

// StartupState is the startup holder as status sees it.
type StartupState struct {
	Mechanism string `json:"mechanism"`
	Installed bool   `json:"installed"`
	// Ours is false for a definition of that name tickscope did not write.
	Ours    bool     `json:"ours"`
	Exe     string   `json:"exe,omitempty"`
	Args    []string `json:"args,omitempty"`
	Holds   string   `json:"holds,omitempty"`
	Stale   bool     `json:"stale"`
	Running bool     `json:"running"`
	PID     int      `json:"pid,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// Status measures the default wait in this process without and with its
// own request (Windows: the finest period; Linux: timer slack 1 ns),
// queries the timer again with nothing held, and reads the startup holder.
// It changes nothing.
func Status(ctx context.Context, host seam.Host, sys seam.System) (*StatusReport, error) {
	q, err := host.Query()
	if err != nil {
		return nil, err
	}
	var rep StatusReport
	if rep.Self.Without, err = Check(ctx, host, q, timerinfo.Setting{}); err != nil {
		return nil, err
	}
	switch {
	case q.Windows != nil:
		rep.Self.WithSetting = timerinfo.Setting{Resolution100ns: q.Windows.Finest100ns}
	case q.Linux != nil:
		rep.Self.WithSetting = timerinfo.Setting{SlackNs: 1}
	}
	if !rep.Self.WithSetting.IsZero() {
		if rep.Self.With, err = Check(ctx, host, q, rep.Self.WithSetting); err != nil {
			return nil, err
		}
	}
	// The query is taken again after the checks, with nothing held.
	if rep.Query, err = host.Query(); err != nil {
		return nil, err
	}
	rep.Startup = ReadStartup(sys, q.Windows != nil)
	return &rep, nil
}

// ReadStartup reads the startup holder's definition and whether it runs;
// nil where the OS has no startup mechanism. windows says how the OS
// compares paths.
func ReadStartup(sys seam.System, windows bool) *StartupState {
	st := sys.Startup()
	if st == nil {
		return nil
	}
	s := &StartupState{Mechanism: st.Describe()}
	s.PID, s.Running = sys.Holder()
	definition, err := st.Read()
	if err != nil {
		s.Error = err.Error()
		return s
	}
	if definition == nil {
		return s
	}
	s.Installed = true
	installed, err := parseDefinition(definition)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	s.Ours, s.Exe, s.Args, s.Holds = installed.Ours(), installed.Exe, installed.Args, installed.Setting()
	if self, err := sys.Executable(); err == nil {
		s.Stale = !SamePath(self, installed.Exe, windows)
	}
	return s
}

// SamePath compares executable paths as the OS does: case-insensitively
// on Windows, after resolving links elsewhere.
func SamePath(a, b string, windows bool) bool {
	if windows {
		return strings.EqualFold(filepath.Clean(a), filepath.Clean(b))
	}
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	if errA != nil || errB != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return ra == rb
}
