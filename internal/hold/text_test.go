package hold_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/hold"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/timerstate"
	"github.com/tickscope/tickscope/internal/waitcheck"
)

func TestHoldTexts(t *testing.T) {
	zero, dflt := int32(0), int32(timerinfo.DMALatencyDefaultUs)
	check := &waitcheck.Check{Method: "sleep", DelayNs: 1e6, Samples: 50, P50Ns: 1_996_000, P99Ns: 2_500_000}
	perProcess := &timerinfo.Windows{Build: 26100, RequestModel: timerinfo.RequestModelPerProcess}
	tests := []struct {
		name  string
		write func(*bytes.Buffer)
		want  string
	}{
		{"holding on Windows", func(b *bytes.Buffer) {
			hold.WriteHolding(b, &hold.HoldReport{Requested: timerinfo.Setting{Resolution100ns: 10000}, Granted: timerinfo.Setting{Resolution100ns: 9996},
				Check: check, RequestModel: "per-process: Windows 10 2004+", ThrottlingOptOut: hold.ThrottlingApplied, Reach: "tickscope itself only", Until: "ESC or Ctrl+C"})
		}, "holding\n  requested      1.0000 ms (10000 x 100ns)\n  granted        0.9996 ms (9996 x 100ns)\n" +
			"  check          sleep 1 ms takes p50 1.9960 ms, p99 2.5000 ms now (50 waits, measured)\n" +
			"  request model  per-process: Windows 10 2004+\n  reaches        tickscope itself only\n" +
			"  throttling     applied: a hidden or minimised holder keeps its request\nholding until ESC or Ctrl+C\n"},
		{"holding on Linux", func(b *bytes.Buffer) {
			hold.WriteHolding(b, &hold.HoldReport{Requested: timerinfo.Setting{CPUDMALatencyUs: &zero}, Granted: timerinfo.Setting{CPUDMALatencyUs: &zero}, Check: check, Until: "Ctrl+C"})
		}, "holding\n  requested      cpu_dma_latency 0 µs\n  in force       cpu_dma_latency 0 µs (the smallest request of all processes)\n" +
			"  check          sleep 1 ms takes p50 1.9960 ms, p99 2.5000 ms now (50 waits, measured)\n" +
			"  reaches        every CPU's idle-state choice, for as long as tickscope runs\nholding until Ctrl+C\n"},
		{"a check on the model", func(b *bytes.Buffer) {
			simulated := *check
			simulated.Simulated = true
			hold.WriteProgramEvent(b, hold.WhileState{Holding: true}, &hold.ProgramEvent{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local), Event: hold.EventStarted,
				Program: "game.exe", PID: 42, Setting: hold.SettingHeld, Granted: &timerinfo.Setting{Resolution100ns: 9998}, Check: &simulated})
		}, "03:04:05.000  game.exe (pid 42) started: holding, granted 0.9998 ms\n" +
			"  check          sleep 1 ms takes p50 1.9960 ms, p99 2.5000 ms now (50 waits, simulated)\n"},
		{"released", func(b *bytes.Buffer) {
			hold.WriteReleased(b, &hold.HoldReport{HeldNs: 1_000_400_000, EndedBy: "for"})
		},
			"released after 1s (--for elapsed)\n"},
		{"waiting", func(b *bytes.Buffer) {
			hold.WriteWaiting(b, &hold.HoldReport{Requested: timerinfo.Setting{CPUDMALatencyUs: &zero}, Until: "Ctrl+C",
				While: &hold.WhileReport{Programs: []string{"game", "/opt/x"}, ScanEveryNs: 1e9}})
		}, "waiting for game, /opt/x (looked for every 1s): nothing is held until one runs\n  requested      cpu_dma_latency 0 µs\n" +
			"  reaches        every CPU's idle-state choice, while one of the programs runs\nwatching until Ctrl+C\n"},
		{"waiting on process events", func(b *bytes.Buffer) {
			hold.WriteWaiting(b, &hold.HoldReport{Requested: timerinfo.Setting{CPUDMALatencyUs: &zero}, Until: "Ctrl+C",
				While: &hold.WhileReport{Programs: []string{"game"}, ScanEveryNs: 10e9, Source: timerstate.SourceEvents}})
		}, "waiting for game (told by the kernel's process events, and looked for every 10s): nothing is held until one runs\n  requested      cpu_dma_latency 0 µs\n" +
			"  reaches        every CPU's idle-state choice, while one of the programs runs\nwatching until Ctrl+C\n"},
		{"a program starts: held", func(b *bytes.Buffer) {
			after := int64(520e6)
			hold.WriteProgramEvent(b, hold.WhileState{Holding: true}, &hold.ProgramEvent{Time: time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.Local), Event: hold.EventStarted,
				Program: "game.exe", PID: 42, NoticedAfterNs: &after, Setting: hold.SettingHeld, Granted: &timerinfo.Setting{Resolution100ns: 9998}, Check: check})
		}, "03:04:05.006  game.exe (pid 42) started 0.52s ago: holding, granted 0.9998 ms\n" +
			"  check          sleep 1 ms takes p50 1.9960 ms, p99 2.5000 ms now (50 waits, measured)\n"},
		{"another starts", func(b *bytes.Buffer) {
			hold.WriteProgramEvent(b, hold.WhileState{Holding: true, Running: []hold.ProgramRunning{{Program: "a", PID: 1}, {Program: "b", PID: 2}}},
				&hold.ProgramEvent{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local), Event: hold.EventStarted, Program: "b", PID: 2})
		}, "03:04:05.000  b (pid 2) started: holding for a (pid 1), b (pid 2)\n"},
		{"the last exits: released", func(b *bytes.Buffer) {
			hold.WriteProgramEvent(b, hold.WhileState{}, &hold.ProgramEvent{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local), Event: hold.EventExited,
				Program: "game", PID: 7, Setting: hold.SettingReleased, InForce: &timerinfo.Setting{CPUDMALatencyUs: &dflt}})
		}, "03:04:05.000  game (pid 7) exited: released, cpu_dma_latency 2000000000 µs in force now\n"},
		{"a take fails", func(b *bytes.Buffer) {
			hold.WriteProgramEvent(b, hold.WhileState{}, &hold.ProgramEvent{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local), Event: hold.EventStarted,
				Program: "game", PID: 7, Setting: hold.SettingFailed, Error: "denied\x1b[2J"})
		}, "03:04:05.000  game (pid 7) started: holding failed: denied\\x1b[2J\n"},
		{"a take tried again succeeds", func(b *bytes.Buffer) {
			hold.WriteProgramEvent(b, hold.WhileState{Holding: true}, &hold.ProgramEvent{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local), Event: hold.EventRetried,
				Program: "game", PID: 7, Setting: hold.SettingHeld, InForce: &timerinfo.Setting{CPUDMALatencyUs: &zero}})
		}, "03:04:05.000  game (pid 7) runs, tried again: holding, cpu_dma_latency 0 µs in force\n"},
		{"ended, --while", func(b *bytes.Buffer) {
			hold.WriteReleased(b, &hold.HoldReport{HeldNs: 7e9, EndedBy: "signal", While: &hold.WhileReport{Holds: 2, HeldNs: 3.5e9}})
		}, "ended after 7s (interrupted): the setting was held 3.5s in all, taken 2 times\n"},
		{"run on Windows", func(b *bytes.Buffer) {
			hold.WriteRunStart(b, hold.RunStart{Program: "game", Requested: timerinfo.Setting{Resolution100ns: 10000}, Granted: timerinfo.Setting{Resolution100ns: 9996}, Windows: perProcess})
		}, "tickscope: holding 1.0000 ms (10000 x 100ns) (granted 0.9996 ms) while game runs; it reaches " + perProcess.Reach() + "\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		tt.write(&b)
		if b.String() != tt.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tt.name, b.String(), tt.want)
		}
	}
	if w := hold.RunWarning(hold.RunStart{Program: "game", Windows: perProcess}); w == "" {
		t.Error("no warning when the request does not reach the program")
	}
}
