// Package timerstate is the state of the timer and of tickscope's holders
// as read from outside them, which watch, hold and the metrics endpoint
// share: the timer state a query reports (State), the startup holder and
// what its definition holds, the processes running of the programs a
// --while holder holds for, and a --while hold's state at one moment.
package timerstate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// State is the timer state at one moment, as the query path reports it.
// Windows fields are set on Windows (and the model), Linux fields on Linux.
type State struct {
	// Windows: the timer periods NtQueryTimerResolution reports (100 ns).
	Current100ns  uint32 `json:"current_100ns,omitempty"`
	Finest100ns   uint32 `json:"finest_100ns,omitempty"`
	Coarsest100ns uint32 `json:"coarsest_100ns,omitempty"`
	// RequestModel is query's request_model (Windows).
	RequestModel string `json:"request_model,omitempty"`
	// GlobalKeyInForce is whether GlobalTimerResolutionRequests is in force
	// in the running boot (Windows; nil elsewhere).
	GlobalKeyInForce *bool `json:"global_key_in_force,omitempty"`
	// Linux: the scheduler tick (1/HZ), the aggregate /dev/cpu_dma_latency
	// (nil when it cannot be read: it needs root) and the reading thread's
	// timer slack, which every thread of tickscope inherits.
	TickNs       int64  `json:"tick_ns,omitempty"`
	DMALatencyUs *int32 `json:"cpu_dma_latency_us,omitempty"`
	TimerSlackNs int64  `json:"timer_slack_ns,omitempty"`
	Simulated    bool   `json:"simulated,omitempty"`
	// Holder is tickscope's startup holder (the one apply --persist
	// starts), read by the loop at each burst rather than by ReadState:
	// telling whether it runs takes its lock for a moment.
	Holder *Holder `json:"startup_holder,omitempty"`
}

// Holder is whether tickscope's startup holder runs, and what it holds.
type Holder struct {
	Running bool `json:"running"`
	PID     int  `json:"pid,omitempty"`
	// Held is the setting a running holder holds, from its definition
	// (StartupDefinition); nil when not running or unknown.
	Held *timerinfo.Setting `json:"held,omitempty"`
	// While are the programs a holder with --while holds for (its
	// definition's), and HoldingFor their processes running now as this
	// process's scan sees them (the holder holds Held only while it sees
	// some; its own state is not read); WhileError is why they could not
	// be looked for.
	While      []string         `json:"while,omitempty"`
	HoldingFor []ProgramRunning `json:"holding_for,omitempty"`
	WhileError string           `json:"while_error,omitempty"`
}

// ReadHolder reads whether the startup holder runs (nil sys: unknown).
func ReadHolder(sys seam.HolderProbe) *Holder {
	if sys == nil {
		return nil
	}
	pid, running := sys.Holder()
	return &Holder{Running: running, PID: pid}
}

// ReadState reads the timer state now through the host's query path. It
// changes nothing. It is the one "read the timer state" of watch, hold's
// checks and ui.
func ReadState(host seam.Host) (State, error) {
	q, err := host.Query()
	if err != nil {
		return State{}, err
	}
	return StateOf(q), nil
}

// StateOf is the state a query reports.
func StateOf(q *timerinfo.Report) State {
	var s State
	if w := q.Windows; w != nil {
		s.Current100ns, s.Finest100ns, s.Coarsest100ns = w.Current100ns, w.Finest100ns, w.Coarsest100ns
		s.RequestModel = w.RequestModel
		inForce := w.RequestModel == timerinfo.RequestModelGlobalKey
		s.GlobalKeyInForce = &inForce
		s.Simulated = q.Arch == "simulated"
	}
	if l := q.Linux; l != nil {
		if l.HZ > 0 {
			s.TickNs = int64(time.Second) / l.HZ
		}
		if l.CPUDMALatencyUs != nil {
			v := *l.CPUDMALatencyUs
			s.DMALatencyUs = &v
		}
		s.TimerSlackNs = l.TimerSlackNs
	}
	return s
}

// CurrentPeriod is the timer interrupt's period now: Windows' current
// period, Linux's scheduler tick; 0 when unknown.
func (s State) CurrentPeriod() time.Duration {
	if s.Current100ns != 0 {
		return time.Duration(s.Current100ns) * 100
	}
	return time.Duration(s.TickNs)
}

// ProgramRunning is a watched program's process running.
type ProgramRunning struct {
	Program string `json:"program"`
	PID     int    `json:"pid"`
}

// WhileState is a hold with --while at one moment: whether it holds, and
// the watched processes running, by program then process id.
type WhileState struct {
	Programs []string
	Holding  bool
	Running  []ProgramRunning
}

// HoldingFor names the processes a hold holds for, "game.exe (pid 4242)",
// or "" when none runs.
func HoldingFor(running []ProgramRunning) string {
	parts := make([]string, len(running))
	for i, r := range running {
		parts[i] = fmt.Sprintf("%s (pid %d)", r.Program, r.PID)
	}
	return strings.Join(parts, ", ")
}

// ScanRunning lists the running processes of the scanner's programs, by
// program then process id.
func ScanRunning(scanner seam.ProgramScanner, programs []string) ([]ProgramRunning, error) {
	found, err := scanner.Scan()
	if err != nil {
		return nil, err
	}
	running := make(map[int]seam.ProgramProcess, len(found))
	for _, p := range found {
		running[p.PID] = p
	}
	return RunningList(running, programs), nil
}

// RunningList is the processes of programs in running (by process id),
// by program then process id.
func RunningList(running map[int]seam.ProgramProcess, programs []string) []ProgramRunning {
	out := make([]ProgramRunning, 0, len(running))
	for _, p := range running {
		out = append(out, ProgramRunning{Program: programs[p.Program], PID: p.PID})
	}
	slices.SortFunc(out, func(a, b ProgramRunning) int {
		return cmp.Or(cmp.Compare(a.Program, b.Program), cmp.Compare(a.PID, b.PID))
	})
	return out
}

// StartupDefinition is the setting tickscope's startup holder holds, from
// its definition as status reads it, and the programs it holds it for
// (--while; nil when it holds it throughout); zero when none is installed,
// the definition cannot be read, or it is not tickscope's. On Windows
// reading it is a call to the Task Scheduler service: read it when the
// holder starts, not at every check.
func StartupDefinition(sys seam.Autostart) (timerinfo.Setting, []string) {
	st := sys.Startup()
	if st == nil {
		return timerinfo.Setting{}, nil
	}
	definition, err := st.Read()
	if err != nil || definition == nil {
		return timerinfo.Setting{}, nil
	}
	installed, err := persist.ParseDefinition(definition)
	if err != nil || !installed.Ours() {
		return timerinfo.Setting{}, nil
	}
	return installed.HeldSetting(), installed.While()
}

// InForce reports whether the machine has req (or finer) in force.
func InForce(q *timerinfo.Report, req timerinfo.Setting) bool {
	switch {
	case q.Windows != nil:
		return timerinfo.PeriodInForce(q.Windows.Current100ns, req.Resolution100ns)
	case q.Linux != nil:
		return q.Linux.CPUDMALatencyUs != nil && req.CPUDMALatencyUs != nil && *q.Linux.CPUDMALatencyUs <= *req.CPUDMALatencyUs
	}
	return false
}
