package timerinfo_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/timerinfo"
)

// The request model describes the running boot: a key written after boot
// is not in force yet on builds that read it.
func TestRunningRequestModel(t *testing.T) {
	one, zero := uint32(1), uint32(0)
	tests := []struct {
		build   uint32
		key     *uint32
		written bool
		want    string
	}{
		{26100, &one, false, timerinfo.RequestModelGlobalKey},
		{26100, &one, true, timerinfo.RequestModelGlobalKeyPending},
		{26100, nil, true, timerinfo.RequestModelKeyRemovedPending},
		{26100, &zero, true, timerinfo.RequestModelKeyRemovedPending},
		{26100, nil, false, timerinfo.RequestModelPerProcess},
		{20348, &one, true, timerinfo.RequestModelGlobalKeyPending},
		// Builds that never read the key are not waiting for a reboot.
		{19045, &one, true, timerinfo.RequestModelKeyIgnored},
		{19045, nil, true, timerinfo.RequestModelPerProcess},
		{18362, &one, true, timerinfo.RequestModelGlobalLegacy},
	}
	for _, tt := range tests {
		got := timerinfo.RunningRequestModel(tt.build, tt.key, tt.written)
		if got != tt.want {
			t.Errorf("RunningRequestModel(%d, %v, %v) = %q, want %q", tt.build, tt.key, tt.written, got, tt.want)
		}
		w := &timerinfo.Windows{Build: tt.build, RequestModel: got, GlobalTimerResolutionRequests: tt.key}
		pending := got == timerinfo.RequestModelGlobalKeyPending || got == timerinfo.RequestModelKeyRemovedPending
		if pending && w.RequestsGlobal() {
			t.Errorf("%q counts as global: --persist would be accepted before the reboot", got)
		}
		if warning := w.PendingRebootWarning(); pending != (warning != "") || (pending && !strings.Contains(warning, "verify-global")) {
			t.Errorf("%q: PendingRebootWarning() = %q", got, warning)
		}
		if pending && !strings.Contains(w.Reach(), "reboot") {
			t.Errorf("%q: Reach() = %q does not mention the reboot", got, w.Reach())
		}
	}
}

func TestWrittenAfterBoot(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	uptime := 3 * time.Hour // booted at 09:00
	tests := []struct {
		name      string
		lastWrite time.Time
		uptime    time.Duration
		want      bool
	}{
		{"written last week", now.Add(-7 * 24 * time.Hour), uptime, false},
		{"written while booting", now.Add(-uptime + 30*time.Second), uptime, false},
		{"written an hour ago", now.Add(-time.Hour), uptime, true},
		{"written just now", now, uptime, true},
		{"unreadable", time.Time{}, uptime, false},
		{"no uptime", now, 0, false},
	}
	for _, tt := range tests {
		if got := timerinfo.WrittenAfterBoot(tt.lastWrite, now, tt.uptime); got != tt.want {
			t.Errorf("%s: WrittenAfterBoot = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TickTune's rule: warn only when the timer is still at or finer than the
// period the removed holder held.
func TestStillRaisedAfterHolder(t *testing.T) {
	i32 := func(v int32) *int32 { return &v }
	win := func(current uint32) timerinfo.Report {
		return timerinfo.Report{Windows: &timerinfo.Windows{Current100ns: current, Coarsest100ns: 156250}}
	}
	tests := []struct {
		name    string
		r       timerinfo.Report
		removed timerinfo.Setting
		raised  bool
	}{
		{"a browser at 1 ms after a 0.5 ms holder", win(10000), timerinfo.Setting{Resolution100ns: 5000}, false},
		{"still 0.5 ms after a 0.5 ms holder", win(5000), timerinfo.Setting{Resolution100ns: 5000}, true},
		{"quantised grant of the holder's period", win(4992), timerinfo.Setting{Resolution100ns: 5000}, true},
		{"0.5 ms after a 1 ms holder", win(5000), timerinfo.Setting{Resolution100ns: 10000}, true},
		{"at rest", win(156250), timerinfo.Setting{Resolution100ns: 156250}, false},
		{"holder unknown", win(5000), timerinfo.Setting{}, false},
		{"linux below the holder's", timerinfo.Report{Linux: &timerinfo.Linux{CPUDMALatencyUs: i32(0)}}, timerinfo.Setting{CPUDMALatencyUs: i32(10)}, true},
		{"linux above the holder's", timerinfo.Report{Linux: &timerinfo.Linux{CPUDMALatencyUs: i32(100)}}, timerinfo.Setting{CPUDMALatencyUs: i32(10)}, false},
		{"linux holder unknown, default", timerinfo.Report{Linux: &timerinfo.Linux{CPUDMALatencyUs: i32(timerinfo.DMALatencyDefaultUs)}}, timerinfo.Setting{}, false},
	}
	for _, tt := range tests {
		if got := tt.r.StillRaised(tt.removed); (got != "") != tt.raised {
			t.Errorf("%s: StillRaised(%v) = %q, want raised %v", tt.name, tt.removed, got, tt.raised)
		}
	}
}

// bcdedit's labels are translated: the check uses {current}, and the
// entries (element names and Yes/No stay English) are read from a German
// machine's output.
func TestBCDEditLocalised(t *testing.T) {
	german := "\r\nWindows-Startladeprogramm\r\n-------------------------\r\n" +
		"Bezeichner              {current}\r\n" +
		"device                  partition=C:\r\n" +
		"path                    \\Windows\\system32\\winload.efi\r\n" +
		"description             Windows 11\r\n" +
		"locale                  de-DE\r\n" +
		"useplatformtick         Yes\r\n" +
		"disabledynamictick      No\r\n"
	if err := timerinfo.CheckBCDEditOutput(german); err != nil {
		t.Errorf("German output refused: %v", err)
	}
	want := timerinfo.BootTimerSettings{DisableDynamicTick: "no", UsePlatformTick: "yes", UsePlatformClock: "default"}
	if got := timerinfo.ParseBCDEdit(german); got != want {
		t.Errorf("ParseBCDEdit(German) = %+v, want %+v", got, want)
	}
	for _, out := range []string{"", "Zugriff verweigert.\r\n", "The boot configuration data store could not be opened.\r\n"} {
		if err := timerinfo.CheckBCDEditOutput(out); err == nil {
			t.Errorf("CheckBCDEditOutput(%q) accepted output with no {current} entry", out)
		}
	}
}

// Without high-resolution timers a period is held in whole milliseconds
// through timeBeginPeriod, or refused.
func TestWholeMillisecondHold(t *testing.T) {
	tests := []struct {
		highRes bool
		request uint32
		ms      uint32
		refused bool
	}{
		{true, 5000, 0, false},
		{true, 10000, 0, false},
		{false, 0, 0, false},
		{false, 10000, 1, false},
		{false, 20000, 2, false},
		{false, 5000, 0, true},
		{false, 10001, 0, true},
	}
	for _, tt := range tests {
		ms, err := timerinfo.WholeMillisecondHold(tt.highRes, tt.request)
		if ms != tt.ms || (err != nil) != tt.refused {
			t.Errorf("WholeMillisecondHold(%v, %d) = %d, %v; want %d, refused %v", tt.highRes, tt.request, ms, err, tt.ms, tt.refused)
		}
		if err != nil && !strings.Contains(err.Error(), "timeEndPeriod") {
			t.Errorf("the refusal does not say why: %v", err)
		}
	}
}

func TestThrottlingOutcome(t *testing.T) {
	if got := timerinfo.ThrottlingOutcome(nil); got != timerinfo.ThrottlingOptedOut {
		t.Errorf("ThrottlingOutcome(nil) = %q", got)
	}
	if got := timerinfo.ThrottlingOutcome(errors.New("Incorrect function.")); got != "unavailable: Incorrect function." {
		t.Errorf("ThrottlingOutcome(err) = %q", got)
	}
}
