package main

import (
	"bytes"
	"runtime"
	"testing"
	"time"
)

// TestWineWindowsAPIs runs platform's Windows tests of calls Wine
// implements, as a Windows test binary in a Windows 10 prefix: the logon
// task's round trip through Task Scheduler's COM interfaces (register,
// read back, replace, run, delete), run's job letting a child break away
// while the others die with it, and the interrupt-time poll leaving no
// thread at THREAD_PRIORITY_TIME_CRITICAL. Each must run and pass: a skip
// is a failure here.
func TestWineWindowsAPIs(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the Wine tests run on linux/amd64, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	wineWindowsAPIs(t, setUpWine(t))
}

func wineWindowsAPIs(t *testing.T, w *wineSetup) {
	exe := windowsTestExe(t, "../../internal/platform")
	prefix := w.prefixes["win10"]
	for _, c := range []struct{ name, test string }{
		{"startup-task", "TestStartupTaskRoundTrip"},
		{"job-breakaway", "TestStartTiedAllowsBreakaway"},
		{"poll-priority", "TestPollInterruptTimeLeavesNoThreadTimeCritical"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := w.command(prefix, w.wine, exe, "-test.run", "^"+c.test+"$", "-test.count=1", "-test.v")
			// Wine maps file names and the test's non-ASCII text
			// through the locale's code page.
			cmd.Env = append(cmd.Env, "LANG=C.UTF-8")
			// Wine's helpers inherit the output pipe: bound the wait, and
			// end the prefix's wineserver if the test hangs.
			cmd.WaitDelay = 10 * time.Second
			hung := time.AfterFunc(3*time.Minute, func() { w.command(prefix, w.wineserver(), "-k").Run() })
			out, err := cmd.CombinedOutput()
			hung.Stop()
			if err != nil {
				t.Fatalf("%s under Wine: %v\n%s", c.test, err, out)
			}
			if !bytes.Contains(out, []byte("--- PASS: "+c.test+" ")) {
				t.Fatalf("%s did not pass under Wine (skipped, or not run):\n%s", c.test, out)
			}
			t.Logf("%s", out)
		})
	}
}
