package platform_test

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/machine"
	"github.com/tickscope/tickscope/internal/platform"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/stats"
	"github.com/tickscope/tickscope/internal/testlock"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// These tests use the real kernel. They are short and assert only what
// physics guarantees on any machine, however loaded: a wait never ends
// before its delay, and order statistics are ordered.

// Every method measure offers, precise's too (package machine's list).
func TestLinuxWaitsNeverReturnEarly(t *testing.T) {
	h := machine.Host()
	for _, m := range h.Methods() {
		t.Run(m.Name, func(t *testing.T) {
			p, err := sample.Measure(context.Background(), h, sample.Spec{Method: m.Name, Delay: time.Millisecond, Samples: 100, Warmup: 5}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Latencies) != 100 {
				t.Fatalf("got %d samples, want 100", len(p.Latencies))
			}
			s := stats.Summarize(p.Latencies)
			if s.Min < int64(time.Millisecond) && !m.CatchesUp {
				t.Errorf("a 1 ms %s wait returned after %d ns", m.Name, s.Min)
			}
			ordered := []int64{s.Min, s.P50, s.P90, s.P95, s.P99, s.P999, s.Max}
			for i := 1; i < len(ordered); i++ {
				if ordered[i] < ordered[i-1] {
					t.Errorf("percentiles out of order: %v", ordered)
				}
			}
		})
	}
}

func readThreadSlack(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/thread-self/timerslack_ns")
	if err != nil {
		t.Skipf("cannot read /proc/thread-self/timerslack_ns: %v", err)
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestLinuxSlackAppliesToTheMeasuringThread(t *testing.T) {
	h := platform.New()
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		before := readThreadSlack(t)
		granted, release, err := h.Apply(timerinfo.Setting{SlackNs: 1})
		if err != nil {
			t.Error(err)
			return
		}
		if got := readThreadSlack(t); got != 1 || granted.SlackNs != 1 {
			t.Errorf("after asking for 1 ns: /proc says %d, granted %d", got, granted.SlackNs)
		}
		if got := h.Observe().TimerSlackNs; got != 1 {
			t.Errorf("Observe says slack %d, want 1", got)
		}
		if err := release(); err != nil {
			t.Error(err)
		}
		if got := readThreadSlack(t); got != before {
			t.Errorf("release left slack %d, want %d", got, before)
		}
	}()
	<-done
}

func TestLinuxQuery(t *testing.T) {
	rep, err := platform.New().Query()
	if err != nil {
		t.Fatal(err)
	}
	l := rep.Linux
	if l == nil || rep.OS != "linux" {
		t.Fatalf("no Linux section: %+v", rep)
	}
	if l.KernelRelease == "" || l.HZ <= 0 || l.TimerSlackNs <= 0 || l.CPUsOnline < 1 {
		t.Errorf("implausible report: %+v", l)
	}
	if l.Root != (os.Geteuid() == 0) {
		t.Errorf("root = %v, euid %d", l.Root, os.Geteuid())
	}
	// The kernel grants timer resolution in whole ticks of at least 100 Hz.
	if 1e9/l.HZ > int64(10*time.Millisecond) {
		t.Errorf("HZ %d is below 100", l.HZ)
	}
}

func TestLinuxRejectsWindowsSetting(t *testing.T) {
	if _, _, err := platform.New().Apply(timerinfo.Setting{Resolution100ns: 5000}); err == nil {
		t.Error("a Windows timer-period request was accepted on Linux")
	}
}

func readDMA(t *testing.T) int32 {
	t.Helper()
	rep, err := platform.New().Query()
	if err != nil || rep.Linux.CPUDMALatencyUs == nil {
		t.Skipf("cannot read /dev/cpu_dma_latency: %v %s", err, rep.Linux.CPUDMALatencyErr)
	}
	return *rep.Linux.CPUDMALatencyUs
}

func TestLinuxDMALatencyHoldReadsBackAndIsReleased(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("holding /dev/cpu_dma_latency needs root")
	}
	unlock, err := testlock.Lock(testlock.DMALatency)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	before := readDMA(t)
	if before == 0 {
		t.Skip("something else already holds cpu_dma_latency at 0")
	}
	zero := int32(0)
	granted, release, err := platform.New().Apply(timerinfo.Setting{CPUDMALatencyUs: &zero})
	if err != nil {
		t.Fatal(err)
	}
	if granted.CPUDMALatencyUs == nil || *granted.CPUDMALatencyUs != 0 {
		t.Errorf("granted %+v", granted)
	}
	if got := readDMA(t); got != 0 {
		t.Errorf("while held, cpu_dma_latency reads %d, want 0", got)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if got := readDMA(t); got != before {
		t.Errorf("after release, cpu_dma_latency reads %d, want %d", got, before)
	}
}
