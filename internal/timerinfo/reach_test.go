package timerinfo_test

import (
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/timerinfo"
)

func TestReach(t *testing.T) {
	tests := []struct {
		build uint32
		key   *uint32
		want  string // a prefix of Reach
		notes string // in Reach too, or ""
	}{
		{7601, nil, "every process", ""},
		{18362, nil, "every process", ""},
		{19045, nil, "tickscope itself only: requests are per-process on this build", "Windows 10 client builds ignore GlobalTimerResolutionRequests"},
		{19045, ptr(1), "tickscope itself only: requests are per-process, and this build ignores", timerinfo.GlobalRequestsKey},
		{22631, nil, "tickscope itself only: requests are per-process on this build", "`tickscope global on`, elevated, and a reboot"},
		{22631, ptr(1), "every process", ""},
		{20348, ptr(0), "tickscope itself only", "`tickscope global on`"},
	}
	for _, tt := range tests {
		w := &timerinfo.Windows{Build: tt.build, RequestModel: timerinfo.RequestModelFor(tt.build, tt.key)}
		got := w.Reach()
		if !strings.HasPrefix(got, tt.want) || !strings.Contains(got, tt.notes) {
			t.Errorf("build %d, key %v: Reach() = %q, want it to start %q and contain %q", tt.build, tt.key, got, tt.want, tt.notes)
		}
	}
}

func TestGlobalAdviceFollowsTheBuildThatReadsTheKey(t *testing.T) {
	for _, tt := range []struct {
		build       uint32
		canBeGlobal bool
	}{{19045, false}, {20347, false}, {20348, true}, {26100, true}} {
		got := (&timerinfo.Windows{Build: tt.build}).GlobalAdvice()
		if can := strings.Contains(got, "tickscope global on"); can != tt.canBeGlobal {
			t.Errorf("build %d: GlobalAdvice() = %q; want advice to turn the key on: %v", tt.build, got, tt.canBeGlobal)
		}
	}
}

func TestStillRaised(t *testing.T) {
	i32 := func(v int32) *int32 { return &v }
	tests := []struct {
		name string
		r    timerinfo.Report
		want string
	}{
		{"windows at rest", timerinfo.Report{Windows: &timerinfo.Windows{Current100ns: 156250, Coarsest100ns: 156250}}, ""},
		{"windows held", timerinfo.Report{Windows: &timerinfo.Windows{Current100ns: 10000, Coarsest100ns: 156250}},
			"the timer is still at 1.0000 ms, finer than the coarsest 15.6250 ms: another program holds a request"},
		{"linux default", timerinfo.Report{Linux: &timerinfo.Linux{CPUDMALatencyUs: i32(timerinfo.DMALatencyDefaultUs)}}, ""},
		{"linux unreadable", timerinfo.Report{Linux: &timerinfo.Linux{}}, ""},
		{"linux held", timerinfo.Report{Linux: &timerinfo.Linux{CPUDMALatencyUs: i32(0)}},
			"cpu_dma_latency is still 0 µs: another program holds a request"},
		{"neither", timerinfo.Report{}, ""},
	}
	for _, tt := range tests {
		if got := tt.r.StillRaised(timerinfo.Setting{Resolution100ns: 10000}); got != tt.want {
			t.Errorf("%s: StillRaised() = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestRequestsGlobal(t *testing.T) {
	for model, want := range map[string]bool{
		timerinfo.RequestModelGlobalLegacy: true,
		timerinfo.RequestModelGlobalKey:    true,
		timerinfo.RequestModelPerProcess:   false,
		timerinfo.RequestModelKeyIgnored:   false,
	} {
		if got := (&timerinfo.Windows{RequestModel: model}).RequestsGlobal(); got != want {
			t.Errorf("RequestsGlobal() under %q = %v, want %v", model, got, want)
		}
	}
}
