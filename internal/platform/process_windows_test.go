package platform

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/tickscope/tickscope/internal/winapi"
)

// jobHelperEnv makes this test binary one of the processes of
// TestStartTiedAllowsBreakaway instead of running tests.
const jobHelperEnv = "TICKSCOPE_JOB_HELPER"

// run's job: a program under it that starts a child with
// CREATE_BREAKAWAY_FROM_JOB gets that child started outside the job (the
// job allows it: JOB_OBJECT_LIMIT_BREAKAWAY_OK), and the child outlives the
// job's end; a child started without the flag is in the job and dies with
// it ("Job Objects", "JOBOBJECT_BASIC_LIMIT_INFORMATION structure",
// Microsoft Learn). Without the limit the breakaway's CreateProcess fails
// with ERROR_ACCESS_DENIED. The processes are this test binary, run again.
func TestStartTiedAllowsBreakaway(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	program := exec.Command(exe, "-test.run=^TestJobHelperProcess$")
	program.Env = append(os.Environ(), jobHelperEnv+"=program")
	program.WaitDelay = 5 * time.Second
	out, err := program.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	job, untie, err := startInJob(program)
	if err != nil {
		t.Fatalf("starting the program in a job: %v", err)
	}
	defer func() { untie() }()
	defer program.Process.Kill()

	// The program says what it started: "breakaway PID" or
	// "breakaway-failed ERROR", then "inherited PID".
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	children := map[string]windows.Handle{}
	for len(children) < 2 {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("the program ended having started %d of its 2 children", len(children))
			}
			kind, value, _ := strings.Cut(line, " ")
			if kind == "breakaway-failed" {
				t.Fatalf("the program's CreateProcess with CREATE_BREAKAWAY_FROM_JOB failed: %s", value)
			}
			pid, err := strconv.Atoi(value)
			if err != nil {
				continue // the testing package's own output
			}
			// PROCESS_QUERY_INFORMATION, not the limited right, which
			// Wine's IsProcessInJob refuses.
			child, err := windows.OpenProcess(windows.PROCESS_QUERY_INFORMATION|windows.SYNCHRONIZE|windows.PROCESS_TERMINATE, false, uint32(pid))
			if err != nil {
				t.Fatalf("OpenProcess(%s child %d): %v", kind, pid, err)
			}
			defer windows.CloseHandle(child)
			defer windows.TerminateProcess(child, 1)
			children[kind] = child
		case <-time.After(30 * time.Second):
			t.Fatalf("the program started %d of its 2 children in 30 s", len(children))
		}
	}

	for kind, wantInJob := range map[string]bool{"breakaway": false, "inherited": true} {
		var inJob bool
		if err := winapi.IsProcessInJob(children[kind], job, &inJob); err != nil {
			t.Fatalf("IsProcessInJob(%s child): %v", kind, err)
		}
		if inJob != wantInJob {
			t.Errorf("the %s child is in run's job: %v, want %v", kind, inJob, wantInJob)
		}
	}

	// The job's end, as when tickscope is killed: its last handle closes
	// with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE set.
	windows.CloseHandle(job)
	untie = func() {}
	if ev, err := windows.WaitForSingleObject(children["inherited"], 10000); ev != windows.WAIT_OBJECT_0 {
		t.Errorf("the child in the job still runs 10 s after the job's handle closed (%d, %v)", ev, err)
	}
	if ev, _ := windows.WaitForSingleObject(children["breakaway"], 0); ev != uint32(windows.WAIT_TIMEOUT) {
		t.Errorf("the child that broke away ended with the job (%d)", ev)
	}
}

// TestJobHelperProcess is not a test: it is the program and its children
// of TestStartTiedAllowsBreakaway, chosen by jobHelperEnv.
func TestJobHelperProcess(t *testing.T) {
	switch os.Getenv(jobHelperEnv) {
	case "":
		t.Skip("a helper process of TestStartTiedAllowsBreakaway")
	case "child":
		time.Sleep(60 * time.Second)
		os.Exit(0)
	case "program":
		exe, err := os.Executable()
		if err != nil {
			fmt.Println("breakaway-failed", err)
			os.Exit(1)
		}
		for _, c := range []struct {
			kind  string
			flags uint32
		}{{"breakaway", windows.CREATE_BREAKAWAY_FROM_JOB}, {"inherited", 0}} {
			child := exec.Command(exe, "-test.run=^TestJobHelperProcess$")
			child.Env = append(os.Environ(), jobHelperEnv+"=child")
			child.SysProcAttr = &syscall.SysProcAttr{CreationFlags: c.flags}
			if err := child.Start(); err != nil {
				fmt.Println(c.kind+"-failed", err)
				os.Exit(1)
			}
			fmt.Println(c.kind, child.Process.Pid)
		}
		time.Sleep(60 * time.Second)
		os.Exit(0)
	}
}
