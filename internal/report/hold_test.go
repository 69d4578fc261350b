package report_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/hold"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

func TestHoldTexts(t *testing.T) {
	zero := int32(0)
	one := uint32(1)
	check := &hold.WaitCheck{Method: "sleep", DelayNs: 1e6, Samples: 50, P50Ns: 1_996_000, P99Ns: 2_500_000}
	perProcess := &timerinfo.Windows{Build: 26100, RequestModel: timerinfo.RequestModelPerProcess}
	tests := []struct {
		name  string
		write func(*bytes.Buffer)
		want  string
	}{
		{"holding on Windows", func(b *bytes.Buffer) {
			report.WriteHolding(b, &hold.HoldReport{Requested: timerinfo.Setting{Resolution100ns: 10000}, Granted: timerinfo.Setting{Resolution100ns: 9996},
				Check: check, RequestModel: "per-process: Windows 10 2004+", ThrottlingOptOut: hold.ThrottlingApplied, Reach: "tickscope itself only", Until: "ESC or Ctrl+C"})
		}, "holding\n  requested      1.0000 ms (10000 x 100ns)\n  granted        0.9996 ms (9996 x 100ns)\n" +
			"  check          sleep 1 ms takes p50 1.9960 ms, p99 2.5000 ms now (50 waits, measured)\n" +
			"  request model  per-process: Windows 10 2004+\n  reaches        tickscope itself only\n" +
			"  throttling     applied: a hidden or minimised holder keeps its request\nholding until ESC or Ctrl+C\n"},
		{"holding on Linux", func(b *bytes.Buffer) {
			report.WriteHolding(b, &hold.HoldReport{Requested: timerinfo.Setting{CPUDMALatencyUs: &zero}, Granted: timerinfo.Setting{CPUDMALatencyUs: &zero}, Check: check, Until: "Ctrl+C"})
		}, "holding\n  requested      cpu_dma_latency 0 µs\n  in force       cpu_dma_latency 0 µs (the smallest request of all processes)\n" +
			"  check          sleep 1 ms takes p50 1.9960 ms, p99 2.5000 ms now (50 waits, measured)\n" +
			"  reaches        every CPU's idle-state choice, for as long as tickscope runs\nholding until Ctrl+C\n"},
		{"released", func(b *bytes.Buffer) {
			report.WriteReleased(b, &hold.HoldReport{HeldNs: 1_000_400_000, EndedBy: "for"})
		},
			"released after 1s (--for elapsed)\n"},
		{"removed a holder whose pid is unreadable", func(b *bytes.Buffer) {
			report.WriteRemove(b, &hold.RemoveResult{Startup: "task", Ended: true})
		}, "ended the holder (its process id was unreadable)\n"},
		{"nothing to remove", func(b *bytes.Buffer) { report.WriteRemove(b, &hold.RemoveResult{Startup: "task"}) },
			"nothing to remove: no task is installed and no holder runs\n"},
		{"global already on", func(b *bytes.Buffer) { report.WriteGlobal(b, &hold.GlobalResult{Key: "K", After: &one}) },
			"K is already 1; nothing was changed\n"},
		{"global off", func(b *bytes.Buffer) {
			report.WriteGlobal(b, &hold.GlobalResult{Key: "K", Before: &one, Changed: true, RequestModel: "m", Undo: "tickscope global on"})
		}, "removed K (it was 1)\nit takes effect after a reboot\nafter the reboot: m\nundo: tickscope global on\n"},
		{"run on Windows", func(b *bytes.Buffer) {
			report.WriteRunStart(b, hold.RunStart{Program: "game", Requested: timerinfo.Setting{Resolution100ns: 10000}, Granted: timerinfo.Setting{Resolution100ns: 9996}, Windows: perProcess})
		}, "tickscope: holding 1.0000 ms (10000 x 100ns) (granted 0.9996 ms) while game runs; it reaches " + perProcess.Reach() + "\n"},
		{"persist, pid unknown", func(b *bytes.Buffer) {
			report.WritePersist(b, &hold.PersistResult{Startup: "task", Exe: "t.exe", Args: []string{"apply"}, When: "boot", Running: true})
		}, "installed the task: it runs t.exe apply at boot\nundo: tickscope startup remove\nthe holder runs and the setting is in force\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		tt.write(&b)
		if b.String() != tt.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tt.name, b.String(), tt.want)
		}
	}
	if w := report.RunWarning(hold.RunStart{Program: "game", Windows: perProcess}); w == "" {
		t.Error("no warning when the request does not reach the program")
	}
	if w := report.PersistWarnings(&hold.PersistResult{StartErr: errors.New("denied"), When: "boot"}); len(w) != 1 || w[0] != "starting it now failed: denied (it will start at the next boot)" {
		t.Errorf("PersistWarnings = %q", w)
	}
	// An elevated --persist names the elevated account's SID: said even on
	// a dry run, whose definition is printed.
	if w := report.PersistWarnings(&hold.PersistResult{ElevatedUser: true, Definition: "<Task/>"}); len(w) != 1 || !strings.Contains(w[0], "runs elevated") {
		t.Errorf("PersistWarnings(elevated) = %q", w)
	}
}

func TestStatusStartupLines(t *testing.T) {
	tests := []struct {
		name  string
		state hold.StartupState
		want  []string
	}{
		{"windowless holder holding", hold.StartupState{Mechanism: "task", Installed: true, Ours: true, Exe: `C:\t\tickscope-holder.exe`, Holds: "--resolution 5000", Running: true, PID: 4, InForce: true, Log: "holding until the process is ended"},
			[]string{"  state          running (process 4), the timer is at what it holds or finer\n", "  last logged    holding until the process is ended\n"}},
		{"running, not holding", hold.StartupState{Mechanism: "task", Installed: true, Ours: true, Running: true, PID: 4},
			[]string{"  state          running (process 4), the timer is not at what it holds\n"}},
		{"stopped, its error logged", hold.StartupState{Mechanism: "task", Installed: true, Ours: true, Stale: true, Log: "tickscope: error: another startup holder runs"},
			[]string{"stale: it runs another executable than this tickscope's holder", "  state          not running\n", "  last logged    tickscope: error: another startup holder runs\n"}},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		report.WriteStatus(&b, &hold.StatusReport{Self: hold.SelfCheck{Without: &hold.WaitCheck{Method: "sleep"}}, Query: &timerinfo.Report{OS: "windows", Windows: &timerinfo.Windows{}}, Startup: &tt.state})
		for _, want := range tt.want {
			if !bytes.Contains(b.Bytes(), []byte(want)) {
				t.Errorf("%s: status lacks %q:\n%s", tt.name, want, b.String())
			}
		}
	}
}
