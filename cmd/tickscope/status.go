package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/platform"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

func (a *app) statusCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "What a wait takes in this process now, the timer state, and the startup holder",
		Long: `Show, in one place:

  - what the default 1 ms wait takes in this process now, measured briefly,
    without a request of its own and with one (Windows: the finest period;
    Linux: timer slack 1 ns);
  - what query reports;
  - the startup holder that apply --persist installs: installed or not,
    running or not, the setting it holds, and "stale" when it runs another
    executable than this one.

It changes nothing: the request it measures with is released at once.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.status(cmd.Context(), asJSON) },
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON (docs/json.md)")
	return cmd
}

type statusReport struct {
	Self    selfCheck         `json:"self"`
	Query   *timerinfo.Report `json:"query"`
	Startup *startupState     `json:"startup"`
}

// selfCheck is the default wait in this process without and with a
// request of its own.
type selfCheck struct {
	Without     *waitCheck        `json:"without_request"`
	WithSetting timerinfo.Setting `json:"with_setting"`
	With        *waitCheck        `json:"with_request"`
}

// startupState is the startup holder as status sees it.
type startupState struct {
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

func (a *app) status(ctx context.Context, asJSON bool) error {
	host := machineHost()
	q, err := host.Query()
	if err != nil {
		return err
	}
	var rep statusReport
	if rep.Self.Without, err = quickCheck(ctx, host, timerinfo.Setting{}); err != nil {
		return err
	}
	switch {
	case q.Windows != nil:
		rep.Self.WithSetting = timerinfo.Setting{Resolution100ns: q.Windows.Finest100ns}
	case q.Linux != nil:
		rep.Self.WithSetting = timerinfo.Setting{SlackNs: 1}
	}
	if !rep.Self.WithSetting.IsZero() {
		if rep.Self.With, err = quickCheck(ctx, host, rep.Self.WithSetting); err != nil {
			return err
		}
	}
	// The query is taken again after the checks, with nothing held.
	if rep.Query, err = host.Query(); err != nil {
		return err
	}
	rep.Startup = readStartup()
	if asJSON {
		return writeJSON(a.stdout, rep)
	}
	w := a.stdout
	fmt.Fprintln(w, "this process, measured now")
	writeCheck(w, "no request", rep.Self.Without)
	if rep.Self.With != nil {
		writeCheck(w, rep.Self.WithSetting.String(), rep.Self.With)
	}
	fmt.Fprintln(w)
	report.WriteQuery(w, rep.Query)
	fmt.Fprintln(w)
	writeStartup(w, rep.Startup)
	return nil
}

func writeCheck(w interface{ Write([]byte) (int, error) }, label string, c *waitCheck) {
	fmt.Fprintf(w, "  %-26s %s 1 ms takes p50 %s ms, p99 %s ms (%d waits)\n", label, c.Method, msText(c.P50Ns), msText(c.P99Ns), c.Samples)
}

// readStartup reads the startup holder's definition and whether it runs.
func readStartup() *startupState {
	st := platform.StartupHolder()
	if st == nil {
		return nil
	}
	s := &startupState{Mechanism: st.Describe()}
	if pid := platform.HolderRunning(); pid != 0 {
		s.Running, s.PID = true, max(pid, 0)
	}
	definition, err := st.Read()
	if err != nil {
		s.Error = err.Error()
		return s
	}
	if definition == nil {
		return s
	}
	s.Installed = true
	installed, err := parseInstalled(definition)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	s.Ours, s.Exe, s.Args, s.Holds = installed.Ours(), installed.Exe, installed.Args, installed.Setting()
	if self, err := os.Executable(); err == nil {
		s.Stale = !samePath(self, installed.Exe)
	}
	return s
}

// samePath compares executable paths as the OS does: case-insensitively
// on Windows, after resolving links elsewhere.
func samePath(a, b string) bool {
	if filepath.Separator == '\\' {
		return strings.EqualFold(filepath.Clean(a), filepath.Clean(b))
	}
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	if errA != nil || errB != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return ra == rb
}

func writeStartup(w interface{ Write([]byte) (int, error) }, s *startupState) {
	fmt.Fprintln(w, "startup holder")
	if s == nil {
		fmt.Fprintln(w, "  none on this OS")
		return
	}
	fmt.Fprintf(w, "  %-14s %s\n", "mechanism", s.Mechanism)
	switch {
	case s.Error != "":
		fmt.Fprintf(w, "  %-14s unknown (%s)\n", "installed", s.Error)
	case !s.Installed:
		fmt.Fprintf(w, "  %-14s no\n", "installed")
	case !s.Ours:
		fmt.Fprintf(w, "  %-14s yes, but not by tickscope (left alone)\n", "installed")
	default:
		fmt.Fprintf(w, "  %-14s yes\n", "installed")
		fmt.Fprintf(w, "  %-14s %s\n", "holds", s.Holds)
		fmt.Fprintf(w, "  %-14s %s %s\n", "runs", s.Exe, strings.Join(s.Args, " "))
		if s.Stale {
			fmt.Fprintf(w, "  %-14s stale: it runs another executable than this one; run apply --persist again to update it\n", "path")
		}
	}
	if s.Running {
		fmt.Fprintf(w, "  %-14s running (process %d)\n", "state", s.PID)
	} else {
		fmt.Fprintf(w, "  %-14s not running\n", "state")
	}
}
