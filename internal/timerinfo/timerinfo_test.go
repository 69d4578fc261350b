package timerinfo_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/timerinfo"
)

func ptr(v uint32) *uint32 { return &v }

func TestRequestModelFor(t *testing.T) {
	tests := []struct {
		build uint32
		key   *uint32
		want  string
	}{
		{7601, nil, timerinfo.RequestModelGlobalLegacy},
		{18362, nil, timerinfo.RequestModelGlobalLegacy},
		{18362, ptr(1), timerinfo.RequestModelGlobalLegacy},
		{19041, nil, timerinfo.RequestModelPerProcess},
		{19045, ptr(0), timerinfo.RequestModelPerProcess},
		{19045, ptr(1), timerinfo.RequestModelKeyIgnored},
		{20348, ptr(1), timerinfo.RequestModelGlobalKey},
		{22000, nil, timerinfo.RequestModelPerProcess},
		{26100, ptr(1), timerinfo.RequestModelGlobalKey},
		{26200, ptr(0), timerinfo.RequestModelPerProcess},
	}
	for _, tt := range tests {
		if got := timerinfo.RequestModelFor(tt.build, tt.key); got != tt.want {
			t.Errorf("RequestModelFor(%d, %v) = %q, want %q", tt.build, tt.key, got, tt.want)
		}
	}
}

func TestSettingString(t *testing.T) {
	tests := []struct {
		s    timerinfo.Setting
		want string
	}{
		{timerinfo.Setting{}, "none"},
		{timerinfo.Setting{Resolution100ns: 5068}, "0.5068 ms (5068 x 100ns)"},
		{timerinfo.Setting{Resolution100ns: 156250}, "15.6250 ms (156250 x 100ns)"},
		{timerinfo.Setting{SlackNs: 1}, "slack 1ns"},
		{timerinfo.Setting{SlackNs: 50000}, "slack 50µs"},
	}
	for _, tt := range tests {
		if got := tt.s.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.s, got, tt.want)
		}
	}
}

func TestNoHZAndPreemption(t *testing.T) {
	cfg := []byte("# comment\nCONFIG_HZ_250=y\nCONFIG_NO_HZ_IDLE=y\n# CONFIG_NO_HZ_FULL is not set\nCONFIG_PREEMPT_VOLUNTARY=y\n")
	if got := timerinfo.NoHZFromConfig(cfg); got != "idle" {
		t.Errorf("NoHZFromConfig = %q, want idle", got)
	}
	if got := timerinfo.NoHZFromConfig(nil); got != "unknown" {
		t.Errorf("NoHZFromConfig(nil) = %q, want unknown", got)
	}
	tests := []struct {
		uname string
		cfg   []byte
		want  string
	}{
		{"#1 SMP PREEMPT_DYNAMIC Debian 6.1.0", nil, "PREEMPT_DYNAMIC"},
		{"#1 SMP PREEMPT_RT Debian", nil, "PREEMPT_RT"},
		{"#1 SMP PREEMPT Tue", nil, "PREEMPT"},
		{"#1 SMP Debian", cfg, "PREEMPT_VOLUNTARY"},
		{"#1 SMP Debian", nil, "unknown"},
	}
	for _, tt := range tests {
		if got := timerinfo.PreemptionModel(tt.uname, tt.cfg); got != tt.want {
			t.Errorf("PreemptionModel(%q) = %q, want %q", tt.uname, got, tt.want)
		}
	}
}

func TestCountCPUList(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"0", 1, true}, {"0-1", 2, true}, {"0-3,8,10-11", 7, true}, {"0-1\n", 2, true},
		{"", 0, false}, {"a", 0, false}, {"3-1", 0, false}, {"-1", 0, false},
		{"0-65535", 65536, true}, {"0-65536", 0, false}, {"70000", 0, false},
	}
	for _, tt := range tests {
		got, err := timerinfo.CountCPUList(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("CountCPUList(%q) = %d, %v; want %d, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
	if cpus, err := timerinfo.ParseCPUList("0-2,5,7-8"); err != nil || !slices.Equal(cpus, []int{0, 1, 2, 5, 7, 8}) {
		t.Errorf("ParseCPUList(\"0-2,5,7-8\") = %v, %v", cpus, err)
	}
}

func TestFormatCPUList(t *testing.T) {
	for _, c := range []struct {
		cpus []int
		want string
	}{
		{nil, ""}, {[]int{3}, "3"}, {[]int{0, 1}, "0-1"}, {[]int{0, 2, 3, 4, 7}, "0,2-4,7"},
		{[]int{0, 1, 2, 3, 8, 10, 11}, "0-3,8,10-11"}, {[]int{5, 4}, "5,4"},
	} {
		if got := timerinfo.FormatCPUList(c.cpus); got != c.want {
			t.Errorf("FormatCPUList(%v) = %q, want %q", c.cpus, got, c.want)
		}
	}
}

func TestParseBCDEdit(t *testing.T) {
	out := "Windows Boot Loader\r\n-------------------\r\nidentifier              {current}\r\n" +
		"useplatformclock        No\r\nuseplatformtick         Yes\r\ndisabledynamictick      Yes\r\n"
	got := timerinfo.ParseBCDEdit(out)
	want := timerinfo.BootTimerSettings{DisableDynamicTick: "yes", UsePlatformTick: "yes", UsePlatformClock: "no"}
	if got != want {
		t.Errorf("ParseBCDEdit = %+v, want %+v", got, want)
	}
	if got := timerinfo.ParseBCDEdit(""); got.DisableDynamicTick != "default" {
		t.Errorf("empty output: %+v", got)
	}
	// A value in another display language is present but not read: never
	// "default", which would say the setting is absent.
	localised := "identifier              {current}\r\ndisabledynamictick      Ja\r\nuseplatformclock        Nein\r\n"
	got = timerinfo.ParseBCDEdit(localised)
	want = timerinfo.BootTimerSettings{DisableDynamicTick: "unknown (Ja)", UsePlatformTick: "default", UsePlatformClock: "unknown (Nein)"}
	if got != want {
		t.Errorf("ParseBCDEdit(localised values) = %+v, want %+v", got, want)
	}
}

func FuzzParsers(f *testing.F) {
	f.Add("useplatformtick Yes\ndisabledynamictick no", "0-3,5")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, text, cpus string) {
		s := timerinfo.ParseBCDEdit(text)
		for _, v := range []string{s.DisableDynamicTick, s.UsePlatformTick, s.UsePlatformClock} {
			if v != "yes" && v != "no" && v != "default" && !strings.HasPrefix(v, "unknown (") {
				t.Fatalf("ParseBCDEdit gave %q", v)
			}
		}
		if n, err := timerinfo.CountCPUList(cpus); err == nil && n < 1 {
			t.Fatalf("CountCPUList(%q) = %d without error", cpus, n)
		}
		if timerinfo.CheckBCDEditOutput(text) == nil && !strings.Contains(strings.ToLower(text), "{current}") {
			t.Fatalf("CheckBCDEditOutput accepted %q", text)
		}
		timerinfo.NoHZFromConfig([]byte(text))
		timerinfo.PreemptionModel(text, []byte(text))
	})
}

func TestWindowsProduct(t *testing.T) {
	tests := []struct {
		major, minor, build uint32
		server              bool
		want                string
	}{
		{6, 1, 7601, false, "Windows 7"},
		{10, 0, 18362, false, "Windows 10 1903"},
		{10, 0, 19045, false, "Windows 10 22H2"},
		{10, 0, 26200, false, "Windows 11 25H2"},
		{10, 0, 27000, false, "Windows 11 build 27000"},
		{10, 0, 19999, false, "Windows 10 build 19999"},
		{10, 0, 20348, true, "Windows Server 2022"},
		{10, 0, 26100, true, "Windows Server 2025"},
	}
	for _, tt := range tests {
		if got := timerinfo.WindowsProduct(tt.major, tt.minor, tt.build, tt.server); got != tt.want {
			t.Errorf("WindowsProduct(%d.%d.%d, server=%v) = %q, want %q", tt.major, tt.minor, tt.build, tt.server, got, tt.want)
		}
	}
}

func TestGlobalVerdict(t *testing.T) {
	for _, tc := range []struct {
		name           string
		baseline, held int64
		granted        uint32
		want           string
	}{
		{"Windows 11 per-process", 15_600_000, 15_620_000, 5000, timerinfo.VerdictPerProcess},
		{"Windows 10 1909, global", 15_600_000, 1_010_000, 5000, timerinfo.VerdictGlobal},
		{"global at 1 ms", 15_600_000, 1_990_000, 10000, timerinfo.VerdictGlobal},
		{"key set, TickTune's 1.5 ms", 15_600_000, 1_500_000, 4992, timerinfo.VerdictGlobal},
		{"dynamic tick at 8 ms", 15_600_000, 8_000_000, 5000, timerinfo.VerdictInconclusive},
		{"already fast", 1_100_000, 1_050_000, 5000, timerinfo.VerdictInconclusive},
		{"slowed a little", 12_000_000, 11_000_000, 5000, timerinfo.VerdictPerProcess},
	} {
		got, reason := timerinfo.GlobalVerdict(tc.baseline, tc.held, tc.granted)
		if got != tc.want {
			t.Errorf("%s: %s (%s), want %s", tc.name, got, reason, tc.want)
		}
		if reason == "" {
			t.Errorf("%s: no reason", tc.name)
		}
	}
}

// ParseCPUList takes any string without panicking, and what it takes is
// at most MaxCPU+1 CPUs, each 0..MaxCPU, as many as CountCPUList counts.
func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"0", "0-1", "0-3,8,10-11", "0-1\n", "", "3-1", "0-65535,0-65535", "1,,2", "-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		cpus, err := timerinfo.ParseCPUList(list)
		n, cerr := timerinfo.CountCPUList(list)
		if (err == nil) != (cerr == nil) || n != len(cpus) {
			t.Fatalf("ParseCPUList: %d CPUs, %v; CountCPUList: %d, %v", len(cpus), err, n, cerr)
		}
		if err == nil {
			// What it read, written and read again, is the same CPUs.
			again, err := timerinfo.ParseCPUList(timerinfo.FormatCPUList(cpus))
			if err != nil || !slices.Equal(again, cpus) {
				t.Fatalf("%q read %v, written %q, read again %v, %v", list, cpus, timerinfo.FormatCPUList(cpus), again, err)
			}
		}
		if len(cpus) > timerinfo.MaxCPU+1 {
			t.Fatalf("%d CPUs", len(cpus))
		}
		for _, c := range cpus {
			if c < 0 || c > timerinfo.MaxCPU {
				t.Fatalf("CPU %d", c)
			}
		}
	})
}
