package explain

import (
	"context"
	"runtime"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/tickscope/tickscope/internal/etwkernel"
	"github.com/tickscope/tickscope/internal/winapi"
)

// The block StartTraceW is given is etwkernel's layout, read back through
// winapi's structure, whose size the build holds to the documented one.
func TestPropertiesThroughWinapi(t *testing.T) {
	var pin runtime.Pinner
	defer pin.Unpin()
	cfg := etwkernel.ExplainSession()
	p := newProperties(cfg.Properties(), &pin)
	g := cfg.GUID
	want := windows.GUID{Data1: g.Data1, Data2: g.Data2, Data3: g.Data3, Data4: g.Data4}
	if p.Wnode.BufferSize != etwkernel.PropertiesWithRoom || p.Wnode.GUID != want || p.Wnode.ClientContext != 1 ||
		p.Wnode.Flags != winapi.WNODE_FLAG_TRACED_GUID || p.LogFileMode != cfg.LogFileMode || p.EnableFlags != cfg.EnableFlags ||
		p.BufferSize != cfg.BufferSizeKB || p.MinimumBuffers != cfg.MinimumBuffers || p.MaximumBuffers != cfg.MaximumBuffers ||
		p.FlushTimer != cfg.FlushTimer || p.LogFileNameOffset != 0 || p.LoggerNameOffset != etwkernel.PropertiesSize {
		t.Errorf("properties read back as %+v", p.EventTraceProperties)
	}
	if p.LogFileMode&winapi.EVENT_TRACE_REAL_TIME_MODE == 0 {
		t.Error("not a real-time session")
	}
}

func underWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}

// Only real Windows, elevated, can pass this: the session starts,
// delivers context switches of the sleeping thread while it runs, and is
// gone once closed. Not run here (no machine here runs Windows); CI's
// Windows runners are elevated.
func TestSessionOnWindows(t *testing.T) {
	if underWine() {
		t.Skip("Wine has no kernel ETW providers")
	}
	sys := NewSystem().(*windowsSystem)
	if ok, why := sys.CanTrace(); !ok {
		t.Skip(why)
	}
	tr, err := sys.StartTrace(context.Background(), func() {})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	runtime.LockOSThread()
	th, _ := sys.Thread()
	for i := 0; i < 50; i++ {
		windows.SleepEx(1, false)
	}
	runtime.UnlockOSThread()
	// Stopping the session delivers what its buffers hold before
	// ProcessTrace returns.
	if _, _, err := tr.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	info := tr.Info()
	wt := tr.(*windowsTrace)
	switches := 0
	for _, ev := range wt.events {
		if c, ok := ev.(*etwkernel.CSwitch); ok && int(c.NewThreadID) == th.TID() {
			switches++
		}
	}
	if info.Events == 0 || switches == 0 || !info.Removed {
		t.Errorf("info %+v, %d switches to the sleeping thread", info, switches)
	}
	if existed, _, _, err := stopSession(); err != nil || existed {
		t.Errorf("after Close, a session of our name: %v, %v", existed, err)
	}
}
