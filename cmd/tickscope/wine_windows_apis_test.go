package main

import (
	"bytes"
	"testing"
)

// wineWindowsAPIs (TestWine/windows-apis) runs platform's Windows tests of
// calls Wine implements, as a Windows test binary in a Windows 10 prefix:
// the logon task's round trip through Task Scheduler's COM interfaces
// (register, read back, replace, run, delete), run's job letting a child
// break away while the others die with it, and the interrupt-time poll
// leaving no thread at THREAD_PRIORITY_TIME_CRITICAL. Each must run and
// pass: a skip is a failure here.
func wineWindowsAPIs(t *testing.T, w *wineSetup) {
	exe := windowsTestExe(t, "../../internal/platform")
	prefix := w.freshPrefix(t, "win10")
	for _, c := range []struct{ name, test string }{
		{"startup-task", "TestStartupTaskRoundTrip"},
		{"job-breakaway", "TestStartTiedAllowsBreakaway"},
		{"poll-priority", "TestPollInterruptTimeLeavesNoThreadTimeCritical"},
		{"who-lock-global", "TestWhoLockIsMachineWide"},
		{"lock-record", "TestLockRecordIsUnderTheProfile"},
		{"lock-access-denied", "TestAMutexThatDeniesAccessIsHeld"},
		{"holder-probe", "TestHolderProbeNeverTakesTheLock"},
		{"end-holder-refuses", "TestEndHolderRefusesAProcessThatIsNotTickscope"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := w.commandWithin(wineCommandDeadline, prefix, w.wine, exe, "-test.run", "^"+c.test+"$", "-test.count=1", "-test.v")
			out, err := cmd.CombinedOutput()
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
