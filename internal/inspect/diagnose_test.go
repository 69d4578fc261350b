package inspect_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/sim/simtest"

	"github.com/tickscope/tickscope/internal/inspect"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/waitcheck"
	"github.com/tickscope/tickscope/internal/who"
)

func win(build uint32, key *uint32, afterBoot bool, mutate func(*timerinfo.Windows)) *timerinfo.Report {
	w := &timerinfo.Windows{Coarsest100ns: 156250, Finest100ns: 5000, Current100ns: 156250, Build: build,
		GlobalTimerResolutionRequests: key, KernelKeyWrittenAfterBoot: afterBoot,
		DynamicTickDisabled: "default", PlatformClock: "default", PlatformTick: "default"}
	w.RequestModel = timerinfo.RunningRequestModel(build, key, afterBoot)
	if mutate != nil {
		mutate(w)
	}
	return &timerinfo.Report{OS: "windows", Windows: w}
}

func lin(slack int64, dma int32) *timerinfo.Report {
	return &timerinfo.Report{OS: "linux", Linux: &timerinfo.Linux{TimerSlackNs: slack, CPUDMALatencyUs: &dma}}
}

func checks(without, with int64) inspect.SelfCheck {
	return inspect.SelfCheck{Without: &waitcheck.Check{P50Ns: without}, With: &waitcheck.Check{P50Ns: with}}
}

func TestDiagnose(t *testing.T) {
	gameHolds := &who.Snapshot{Windows: &who.Windows{Holders: []who.Holder{
		{PID: 99, Image: `\Device\HarddiskVolume3\tickscope.exe`, Period100ns: 5000, Self: true},
		{PID: 4321, Image: `\Device\HarddiskVolume3\Games\game.exe`, Period100ns: 5000},
		{PID: 77, Image: `\Device\HarddiskVolume3\chrome.exe`, Period100ns: 10000},
	}}}
	held := func(w *timerinfo.Windows) { w.Current100ns = 5000 }
	for _, tc := range []struct {
		name  string
		in    inspect.DiagnosisInput
		codes []string
		says  []string // each in some reason's text or command
	}{
		{name: "Windows 11, per-process, nothing else", in: inspect.DiagnosisInput{Query: win(26100, nil, false, nil)},
			codes: []string{inspect.ReasonPerProcess}, says: []string{"tickscope global on (elevated), then restart Windows"}},
		{name: "Windows 10 2004+, per-process: no global switch", in: inspect.DiagnosisInput{Query: win(19045, nil, false, nil)},
			codes: []string{inspect.ReasonPerProcess}, says: []string{"tickscope run --resolution 5000 -- PROGRAM", "no global switch"}},
		{name: "Windows 10 with the key: ignored", in: inspect.DiagnosisInput{Query: win(19045, simtest.One(), false, nil)},
			codes: []string{inspect.ReasonKeyIgnored}, says: []string{"never read it"}},
		{name: "key set after boot", in: inspect.DiagnosisInput{Query: win(26100, simtest.One(), true, nil)},
			codes: []string{inspect.ReasonKeyPending}, says: []string{"shutdown /r /t 0"}},
		{name: "key in force on Windows 11: nothing", in: inspect.DiagnosisInput{Query: win(26100, simtest.One(), false, nil)}},
		{name: "Windows 7: nothing", in: inspect.DiagnosisInput{Query: win(7601, nil, false, nil)}},
		{name: "Windows 11, opt-out failed while holding", in: inspect.DiagnosisInput{Query: win(26100, simtest.One(), false, nil), Self: checks(15_000_000, 1_000_000), Throttling: "unavailable: Incorrect function."},
			codes: []string{inspect.ReasonThrottled}, says: []string{"minimised or hidden", "Incorrect function"}},
		{name: "Windows 10, opt-out unavailable: no such throttling", in: inspect.DiagnosisInput{Query: win(19045, nil, false, nil), Self: checks(15_000_000, 1_000_000), Throttling: "unavailable: Incorrect function."},
			codes: []string{inspect.ReasonPerProcess}},
		{name: "Windows 11, opted out", in: inspect.DiagnosisInput{Query: win(26100, simtest.One(), false, nil), Self: checks(15_000_000, 1_000_000), Throttling: timerinfo.ThrottlingOptedOut}},
		{name: "another process holds a finer period, named", in: inspect.DiagnosisInput{Query: win(26100, simtest.One(), false, held), Holders: gameHolds},
			codes: []string{inspect.ReasonFinerHolder}, says: []string{"game.exe (process 4321, 0.5000 ms) holds it", "close game.exe"}},
		{name: "another process holds a finer period, unnamed", in: inspect.DiagnosisInput{Query: win(26100, simtest.One(), false, held), HoldersErr: errors.New("OpenTraceW(tickscope-who): Access denied.")},
			codes: []string{inspect.ReasonFinerHolder}, says: []string{"another process holds the timer at 0.5000 ms", "tickscope who (elevated)"}},
		{name: "tickscope's own request is not another's", in: inspect.DiagnosisInput{Query: win(26100, simtest.One(), false, func(w *timerinfo.Windows) { held(w); w.ProcessHoldsRequest = true })}},
		{name: "bcdedit: dynamic tick off and platform clock forced", in: inspect.DiagnosisInput{Query: win(26100, simtest.One(), false, func(w *timerinfo.Windows) { w.DynamicTickDisabled, w.PlatformClock = "yes", "yes" })},
			codes: []string{inspect.ReasonDynamicTickOff, inspect.ReasonPlatformClock}, says: []string{"bcdedit /deletevalue disabledynamictick", "bcdedit /deletevalue useplatformclock"}},
		{name: "bcdedit unknown without elevation: nothing", in: inspect.DiagnosisInput{Query: win(26100, simtest.One(), false, func(w *timerinfo.Windows) { w.DynamicTickDisabled = "unknown (needs elevation)" })}},

		{name: "Linux default slack costs", in: inspect.DiagnosisInput{Query: lin(50_000, timerinfo.DMALatencyDefaultUs), Self: checks(1_080_000, 1_030_000)},
			codes: []string{inspect.ReasonDefaultSlack}, says: []string{"p50 1.0800 ms", "1.0300 ms with 1 ns", "tickscope run --slack 1us -- PROGRAM"}},
		{name: "Linux default slack within noise", in: inspect.DiagnosisInput{Query: lin(50_000, timerinfo.DMALatencyDefaultUs), Self: checks(1_035_000, 1_030_000)}},
		{name: "Linux slack already set", in: inspect.DiagnosisInput{Query: lin(1, timerinfo.DMALatencyDefaultUs), Self: checks(1_080_000, 1_030_000)}},
		{name: "Linux DMA latency held, named", in: inspect.DiagnosisInput{Query: lin(1, 7), Holders: &who.Snapshot{Linux: &who.Linux{DMALatencyHolders: []who.Process{{PID: 812, Name: "tickscope"}}}}},
			codes: []string{inspect.ReasonDMALatencyHeld}, says: []string{"held at 7 µs", "by tickscope (process 812)", "kill 812"}},
		{name: "Linux DMA latency held, unnamed", in: inspect.DiagnosisInput{Query: lin(1, 0)},
			codes: []string{inspect.ReasonDMALatencyHeld}, says: []string{"sudo tickscope who"}},
		{name: "Linux SCHED_FIFO threads", in: inspect.DiagnosisInput{Query: lin(1, timerinfo.DMALatencyDefaultUs), Holders: &who.Snapshot{Linux: &who.Linux{RealTime: []who.Thread{
			{PID: 5, TID: 6, Name: "jackd", Policy: "SCHED_FIFO", Priority: 70}, {PID: 5, TID: 7, Name: "a", Policy: "SCHED_RR", Priority: 1},
			{PID: 5, TID: 8, Name: "b", Policy: "SCHED_FIFO", Priority: 1}, {PID: 5, TID: 9, Name: "c", Policy: "SCHED_FIFO", Priority: 1}}}}},
			codes: []string{inspect.ReasonRealTimeThreads}, says: []string{"jackd (thread 6, SCHED_FIFO 70)", "and 1 more", "chrt --other -p 0 6"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := inspect.Diagnose(tc.in)
			var codes []string
			var text strings.Builder
			for _, r := range d.Reasons {
				codes = append(codes, r.Code)
				text.WriteString(r.Says + "\n" + r.Do + "\n")
				if r.Says == "" || r.Do == "" {
					t.Errorf("reason %s without text or command: %+v", r.Code, r)
				}
			}
			if !slices.Equal(codes, tc.codes) {
				t.Errorf("codes = %v, want %v\n%s", codes, tc.codes, text.String())
			}
			for _, want := range tc.says {
				if !strings.Contains(text.String(), want) {
					t.Errorf("no reason says %q:\n%s", want, text.String())
				}
			}
		})
	}
}

func TestDiagnoseSaysWhetherHoldersWereRead(t *testing.T) {
	notElevated := win(26100, nil, false, nil)
	if d := inspect.Diagnose(inspect.DiagnosisInput{Query: notElevated}); !strings.Contains(d.Holders, "elevated terminal") {
		t.Errorf("holders = %q", d.Holders)
	}
	if d := inspect.Diagnose(inspect.DiagnosisInput{Query: lin(1, 0), HoldersErr: errors.New("read /proc: denied")}); d.Holders != "not read: read /proc: denied" {
		t.Errorf("holders = %q", d.Holders)
	}
	if d := inspect.Diagnose(inspect.DiagnosisInput{Query: lin(1, 0), Holders: &who.Snapshot{Linux: &who.Linux{}}}); d.Holders != "read" {
		t.Errorf("holders = %q", d.Holders)
	}
}
