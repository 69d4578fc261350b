package platform_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/platform"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/winapi"
)

// The logon task's whole round trip through Task Scheduler's COM
// interfaces, as apply --persist, status, startup remove and the ui do it:
// register the XML persist.TaskXML writes, read it back, register it again
// (replace), run it, delete it, and find it gone. The holder's path (under
// a user's folder) and the description hold non-ASCII letters, an
// apostrophe, & and spaces: they must come back exactly, as UTF-16 never
// passes through a console code page. It runs on real Windows
// (CONTRIBUTING.md: tests that only real Windows can pass) and under Wine (cmd/tickscope's Wine tests),
// whose taskschd.dll and schedsvc implement these interfaces; where Wine
// differs (it does not run tasks), the test says so and checks what Wine
// does.
func TestStartupTaskRoundTrip(t *testing.T) {
	sys := platform.NewSystem()
	startup := sys.Startup()
	if startup == nil {
		t.Fatal("the Windows System has no Startup")
	}
	existing, err := startup.Read()
	if err != nil {
		t.Fatalf("reading the task %q before the test: %v", persist.TaskName, err)
	}
	if existing != nil {
		t.Skipf("a task named %q exists on this machine (a holder set up with apply --persist?); this test would replace it, so it leaves it alone", persist.TaskName)
	}
	sid, err := sys.UserSID()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("elevated: %v (non-elevated is the case that matters on Windows: an administrator may register any logon task)", sys.Elevated())

	// The holder's path is only registered and read back, never run, so
	// nothing is written there: a folder under a user's folder whose name
	// is not ASCII (the account name was Chinese, on code page 936).
	exe := `C:\Users\张伟 Zoë\tick scope & O'Brien ñ Ω 测试\tickscope-holder.exe`
	args := []string{"apply", "--ms", "1", "--no-console", "--no-esc", "--as-startup"}

	t.Cleanup(func() { startup.Delete() })
	// The second round's description differs, so that reading it back
	// shows the task was replaced.
	for _, round := range []string{"register", "replace"} {
		description := "Holds --ms 1 (tickscope, 测试 ñ Ω, " + round + ") " + persist.Marker("windows-native-test")
		definition, err := persist.TaskXML(persist.Task{Exe: exe, Args: args, Description: description, DelaySeconds: 15, UserSID: sid})
		if err != nil {
			t.Fatal(err)
		}
		if err := startup.Install(definition); err != nil {
			t.Fatalf("%s: Install: %v", round, err)
		}
		read, err := startup.Read()
		if err != nil {
			t.Fatalf("%s: Read: %v", round, err)
		}
		if read == nil {
			t.Fatalf("%s: Read finds no task after Install", round)
		}
		in, err := persist.ParseTask(read)
		if err != nil {
			t.Fatalf("%s: ParseTask: %v\n%s", round, err, read)
		}
		if in.Description != description || !in.Ours() {
			t.Errorf("%s: the description reads back as %q, want %q", round, in.Description, description)
		}
		if underWine() {
			// Wine's task definition keeps the registration info and the
			// settings but writes back an empty Exec action, no trigger
			// and no principal's user: what it drops is logged, not
			// checked.
			t.Logf("%s: under Wine the command reads back as %q, the arguments as %q, the users as %q and %q", round, in.Exe, in.Args, in.LogonUserID, in.PrincipalUserID)
			continue
		}
		if in.Exe != exe {
			t.Errorf("%s: the command reads back as %q, want %q\n%s", round, in.Exe, exe, read)
		}
		if !slices.Equal(in.Args, args) {
			t.Errorf("%s: the arguments read back as %q, want %q", round, in.Args, args)
		}
		if in.LogonUserID != sid || in.PrincipalUserID != sid {
			t.Errorf("%s: the trigger's and principal's user read back as %q and %q, want %q", round, in.LogonUserID, in.PrincipalUserID, sid)
		}
	}

	// Run: on Windows the task starts (the empty holder then fails, which
	// is Task Scheduler's business, not Run's). Wine's IRegisteredTask::Run
	// is not implemented: the HRESULT must come back as an error that
	// names the call, not as a success.
	err = startup.Start()
	var osErr *seam.OSError
	switch {
	case err == nil:
	case underWine() && errors.As(err, &osErr) && osErr.Call == "IRegisteredTask::Run":
		t.Logf("Wine does not run tasks: %v", err)
	default:
		t.Errorf("Start: %v", err)
	}

	if err := startup.Delete(); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	after, err := startup.Read()
	if err != nil {
		t.Fatalf("Read after Delete: %v", err)
	}
	if after != nil {
		t.Errorf("the task %q is still registered after Delete:\n%s", persist.TaskName, after)
	}
	// Deleting what is not there is an error naming the call and the
	// missing task, not a silent success.
	err = startup.Delete()
	if err == nil || !strings.Contains(err.Error(), "ITaskFolder::DeleteTask") || !errors.Is(err, winapi.HRESULTFromWin32(2)) {
		t.Errorf("deleting a task that is not there: %v, want ITaskFolder::DeleteTask's ERROR_FILE_NOT_FOUND", err)
	}
}

// underWine tells whether this runs under Wine: its ntdll exports
// wine_get_version, Windows' does not.
func underWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}
